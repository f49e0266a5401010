# Turns the host copy of one logged window (after the all-reduce) into metrics.jsonl records: for the
# logged step, the per-block telemetry and the run-level output-logit and final-norm fields, in the
# engine's field names (docs/formats.md). Pure functions, so they are tested without torch.
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from .layout import NORM_ROLES, ROLES
from .measure import (ACT_COLUMNS, ENTROPY, ENTROPY_ROWS, FINAL_SCALE, K_COUNT, K_SQUARES, LOG_Z_COUNT,
                      LOG_Z_MAX_ABS, LOG_Z_SUM, LOGIT_COUNT, LOGIT_MAX, LOGIT_SUM, Q_COUNT, Q_SQUARES, RESID,
                      RESID_ATTN, RESID_ATTN_COUNT, RESID_COUNT, RUN_COLUMNS, norm_column)

# The field the engine has no name for: the fraction of a block's coordinates whose sqrt(Adam's v) is
# below the optimizer's eps (docs/bridge.md#what-it-records).
ADAM_EPS_FRACTION = "adam_eps_fraction"


@dataclass
class BlockValues:
    acts: Sequence[float]  # ACT_COLUMNS sums
    grad_squares: Sequence[float]  # one per ROLES entry
    update_square: float
    param_square: float
    numel: int  # elements of the block's trainable parameters
    head_max: Sequence[float]  # each head's largest attention logit (-inf: not sampled)
    adam: Optional[Sequence[float]] = None  # (sum of v, coordinates with sqrt(v) < eps, coordinates)


@dataclass
class RunValues:
    sums: Sequence[float]  # RUN_COLUMNS sums
    maxima: Sequence[float]  # LOG_Z_MAX_ABS, LOGIT_MAX


@dataclass
class Logged:
    blocks: List[BlockValues]
    run: RunValues
    grad_total_square: float


def logged_sizes(blocks: int, has_adam: bool) -> Tuple[int, ...]:
    """The lengths of the packed sums of a logged step: block acts, run sums, gradient squares (and the
    total), update and parameter squares, Adam's moments."""
    return (blocks * ACT_COLUMNS, RUN_COLUMNS, blocks * len(ROLES) + 1, 2 * blocks, 3 * blocks if has_adam else 0)


def split_logged(sums: Sequence[float], maxima: Sequence[float], numel: Sequence[int], has_adam: bool) -> Logged:
    """The host copy of a logged step's packed sums and maxima, per block and for the run."""
    blocks = len(numel)
    parts, start = [], 0
    for size in logged_sizes(blocks, has_adam):
        parts.append(sums[start:start + size])
        start += size
    acts, run, grads, updates, adam = parts
    heads = (len(maxima) - 2) // blocks
    roles = len(ROLES)
    values = [BlockValues(acts[b * ACT_COLUMNS:(b + 1) * ACT_COLUMNS], grads[b * roles:(b + 1) * roles],
                          updates[b], updates[blocks + b], numel[b], maxima[b * heads:(b + 1) * heads],
                          adam[b::blocks] if has_adam else None) for b in range(blocks)]
    return Logged(values, RunValues(run, maxima[blocks * heads:]), grads[-1])


def _ratio(total: float, count: float) -> Optional[float]:
    return total / count if count > 0 else None


def _rms(squares: float, count: float) -> Optional[float]:
    return math.sqrt(squares / count) if count > 0 else None


def _scale_fields(prefix: str, moments: Sequence[float]) -> Dict[str, float]:
    """{prefix_scale_mean, prefix_scale_cv} from (sum, squares, count) of per-token scales, as the
    engine computes them (norm_scales.cpp); nothing when no token was measured."""
    total, squares, count = moments
    if count <= 0:
        return {}
    mean = total / count
    spread = math.sqrt(max(0.0, squares / count - mean * mean))
    return {f"{prefix}_scale_mean": mean, f"{prefix}_scale_cv": spread / mean if mean > 0 else 0.0}


def _put(record: Dict, key: str, value: Optional[float]):
    if value is not None:
        record[key] = value


def _attention_fields(values: BlockValues) -> Dict:
    if values.acts[ENTROPY_ROWS] <= 0:
        return {}
    out = {"attn_entropy": values.acts[ENTROPY] / values.acts[ENTROPY_ROWS],
           "attn_max_logit": max(values.head_max), "attn_head_max_logit": list(values.head_max)}
    _put(out, "q_rms", _rms(values.acts[Q_SQUARES], values.acts[Q_COUNT]))
    _put(out, "k_rms", _rms(values.acts[K_SQUARES], values.acts[K_COUNT]))
    return out


def _optimizer_fields(values: BlockValues, update_ratio: bool) -> Dict:
    out = {}
    if update_ratio and values.param_square > 0:
        out["update_ratio"] = math.sqrt(values.update_square / values.param_square)
        _put(out, "update_rms", _rms(values.update_square, values.numel))
    if values.adam is not None and values.adam[2] > 0:
        v_sum, below, count = values.adam
        out["adam_grad_rms"] = math.sqrt(max(0.0, v_sum / count))
        out[ADAM_EPS_FRACTION] = below / count
    return out


def layer_record(values: BlockValues, roles: Sequence[str], grad_scale: float, has_resid_attn: bool,
                 update_ratio: bool) -> Dict:
    """One block's entry of "layers": only what was measured (a missing key means not measured)."""
    record = {}
    _put(record, "resid", _ratio(values.acts[RESID], values.acts[RESID_COUNT]))
    if has_resid_attn:
        _put(record, "resid_attn", _ratio(values.acts[RESID_ATTN], values.acts[RESID_ATTN_COUNT]))
    record["grad"] = {role: math.sqrt(values.grad_squares[ROLES.index(role)]) * grad_scale for role in roles}
    record.update(_optimizer_fields(values, update_ratio))
    record.update(_attention_fields(values))
    for role in NORM_ROLES:
        column = norm_column(role)
        record.update(_scale_fields(role, values.acts[column:column + 3]))
    return record


def run_record(run: RunValues) -> Dict:
    """A logged step's run-level fields: the output logits and the final norm's scale, when measured."""
    record = {}
    if run.sums[LOG_Z_COUNT] > 0:
        record["log_z_mean"] = run.sums[LOG_Z_SUM] / run.sums[LOG_Z_COUNT]
        record["log_z_max_abs"] = run.maxima[LOG_Z_MAX_ABS]
        record["logit_mean"] = run.sums[LOGIT_SUM] / run.sums[LOGIT_COUNT]
        record["logit_max"] = run.maxima[LOGIT_MAX]
    record.update(_scale_fields("final_norm", run.sums[FINAL_SCALE:FINAL_SCALE + 3]))
    return record


def resid_finite(values: BlockValues) -> bool:
    return math.isfinite(values.acts[RESID]) and math.isfinite(values.acts[RESID_ATTN])


def first_bad_block(blocks: Sequence[BlockValues]) -> Optional[int]:
    """The engine's rule: the first block whose residual sum is not finite, else the last block with a
    non-finite gradient (the first that backward reached)."""
    for b, values in enumerate(blocks):
        if not resid_finite(values):
            return b
    bad = [b for b, values in enumerate(blocks) if not all(math.isfinite(g) for g in values.grad_squares)]
    return bad[-1] if bad else None


def clip_scale(user_grad_norm: Optional[float], measured_total_square: float) -> float:
    """Per-block norms are measured on the gradients the optimizer uses, after any clipping; when the
    user passes the pre-clip total (what clip_grad_norm_ returns) and it is larger, the block norms are
    scaled back to before clipping by the same factor (global-norm clipping scales every gradient alike)."""
    measured = math.sqrt(measured_total_square) if measured_total_square > 0 else 0.0
    if user_grad_norm is None or not math.isfinite(user_grad_norm) or measured <= 0:
        return 1.0
    return user_grad_norm / measured if user_grad_norm > measured * (1 + 1e-6) else 1.0
