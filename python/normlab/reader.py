# normlab.load_run(): any run folder (NormLab's engine, a sweep point, the bridge) as tidy pandas frames:
# one row per step, one row per (step, block), one row per event, plus config and summary as dicts.
# Each frame is built on first use from one pass over the files; pandas is needed only here.
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


def _flatten(prefix: str, value, out: Dict):
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else key, inner, out)
    else:
        out[prefix] = float("nan") if value is None else value


class Run:
    """A run folder read into frames: .steps, .blocks, .events (pandas), .config, .summary (dicts)."""

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
    def _metrics(self) -> List[dict]:
        return _read_lines(os.path.join(self.path, "metrics.jsonl"))

    @cached_property
    def steps(self):
        """One row per step: step, loss, lr, grad_norm, steps_per_s, val_loss, ... (NaN = not logged)."""
        import pandas as pd

        rows = [{k: (float("nan") if v is None else v) for k, v in r.items()
                 if k not in ("layers", "encoder_layers")} for r in self._metrics]
        return pd.DataFrame(rows).set_index("step", drop=False) if rows else pd.DataFrame(columns=["step"])

    @cached_property
    def blocks(self):
        """One row per (step, stack, block) of the logged steps; nested fields flattened with dots
        (grad.w_qkv, dependency.attn). stack is "decoder" (the `layers`) or "encoder"."""
        import pandas as pd

        rows = []
        for record in self._metrics:
            for stack, key in (("decoder", "layers"), ("encoder", "encoder_layers")):
                for block, layer in enumerate(record.get(key) or []):
                    row = {"step": record["step"], "stack": stack, "block": block}
                    _flatten("", layer, row)
                    rows.append(row)
        return pd.DataFrame(rows) if rows else pd.DataFrame(columns=["step", "stack", "block"])

    @cached_property
    def events(self):
        import pandas as pd

        rows = _read_lines(os.path.join(self.path, "events.jsonl"))
        return pd.DataFrame(rows) if rows else pd.DataFrame(columns=["step", "kind", "message"])

    def __repr__(self):
        return f"normlab.Run({self.path!r}: {self.summary.get('status', '?')}, {self.summary.get('steps', '?')} steps)"


def load_run(path) -> Run:
    """Reads a run folder (NormLab's own or the bridge's). Frames are built on first access."""
    return Run(os.fspath(path))
