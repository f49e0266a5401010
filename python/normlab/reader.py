# normlab.load_run(): any run folder (NormLab's engine, a sweep point, the bridge) as tidy pandas frames:
# one row per step (indexed by step), one row per (step, block), one row per event, plus config, summary
# and provenance as dicts. Each frame is built on first use from one pass; pandas is needed only here.
from __future__ import annotations

import json
import os
from functools import cached_property
from typing import Dict, List


def _read_lines(path: str) -> List[dict]:
    """Valid JSON objects of a .jsonl file; an incomplete last line (a writer mid-append) and bad lines
    are skipped, as the window's reader does."""
    if not os.path.exists(path):
        return []
    out = []
    with open(path, "rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                break
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("step"), int):
                out.append(record)
    return out


def _read_json(path: str) -> Dict:
    try:
        with open(path) as f:
            value = json.load(f)
        return value if isinstance(value, dict) else {}
    except (OSError, ValueError):
        return {}


def _number(value):
    return float("nan") if value is None else value


def _flatten(prefix: str, value, out: Dict):
    """Nested objects as dotted keys; null as NaN, in lists too."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else key, inner, out)
    elif isinstance(value, list):
        out[prefix] = [_number(v) for v in value]
    else:
        out[prefix] = _number(value)


def _frame(rows, columns, index=None):
    """A DataFrame of `rows` (or an empty one with `columns`); `index` becomes the index, not a column.
    Columns named like a DataFrame attribute are renamed by safe_columns."""
    import pandas as pd

    frame = pd.DataFrame(rows) if rows else pd.DataFrame(columns=columns)
    if index is not None:
        frame = frame.set_index(index)
    return frame.rename(columns=safe_columns(list(frame.columns), pd.DataFrame))


def safe_columns(names, frame_class) -> Dict[str, str]:
    """{old: new} for the names that are attributes of frame_class (`stack` would shadow DataFrame.stack,
    `T` the transpose): "_" is appended until the name is neither an attribute nor another column
    (`stack` -> `stack_`), so `frame.name` always reaches the column."""
    taken = set(names)
    renames = {}
    for name in names:
        new = name
        while hasattr(frame_class, new) or (new != name and new in taken):
            new += "_"
        if new != name:
            renames[name] = new
            taken.add(new)
    return renames


class Run:
    """A run folder read into frames: .steps, .blocks, .events (pandas), .config, .summary and
    .provenance (dicts)."""

    def __init__(self, path: str):
        if not os.path.isdir(path):
            raise FileNotFoundError(f"normlab.load_run: {path} is not a folder")
        if not any(os.path.exists(os.path.join(path, n)) for n in ("config.json", "metrics.jsonl")):
            raise FileNotFoundError(f"normlab.load_run: {path} is not a run folder (no config.json or "
                                    "metrics.jsonl)")
        self.path = path

    @cached_property
    def config(self) -> Dict:
        return _read_json(os.path.join(self.path, "config.json"))

    @cached_property
    def summary(self) -> Dict:
        return _read_json(os.path.join(self.path, "summary.json"))

    @cached_property
    def provenance(self) -> Dict:
        return _read_json(os.path.join(self.path, "provenance.json"))

    @cached_property
    def _metrics(self) -> List[dict]:
        return _read_lines(os.path.join(self.path, "metrics.jsonl"))

    @cached_property
    def steps(self):
        """One row per step, indexed by `step` (not a column): loss, lr, grad_norm, steps_per_s, val_loss,
        log_z_mean, ... (NaN = not logged on that step)."""
        rows = [{k: _number(v) for k, v in r.items()
                 if k not in ("layers", "encoder_layers")} for r in self._metrics]
        return _frame(rows, ["step"], index="step")

    @cached_property
    def blocks(self):
        """One row per (step, stack_, block) of the logged steps, on a plain 0..n-1 index; nested fields
        flattened with dots (grad.w_qkv, dependency.attn). stack_ is "decoder" (the `layers`) or
        "encoder"; a list field (attn_head_max_logit) stays a list in its cell."""
        rows = []
        for record in self._metrics:
            for stack, key in (("decoder", "layers"), ("encoder", "encoder_layers")):
                for block, layer in enumerate(record.get(key) or []):
                    row = {"step": record["step"], "stack": stack, "block": block}
                    _flatten("", layer, row)
                    rows.append(row)
        return _frame(rows, ["step", "stack", "block"])

    @cached_property
    def events(self):
        """One row per event, on a plain 0..n-1 index: step, kind, message, and key, value, block where
        an event has them."""
        return _frame(_read_lines(os.path.join(self.path, "events.jsonl")), ["step", "kind", "message"])

    def __repr__(self):
        return f"normlab.Run({self.path!r}: {self.summary.get('status', '?')}, {self.summary.get('steps', '?')} steps)"


def load_run(path) -> Run:
    """Reads a run folder (NormLab's own or the bridge's). Frames are built on first access."""
    return Run(os.fspath(path))
