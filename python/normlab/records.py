# Turns the host copy of one logged window (after the all-reduce) into metrics.jsonl records: the
# per-step scalars of every step since the last log and, for the logged step, the per-block telemetry
# in the engine's field names (docs/formats.md). Pure functions, so they are tested without torch.
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from .layout import ROLES
from .measure import ACT_COLUMNS, ENTROPY, ENTROPY_ROWS, RESID, RESID_ATTN, RESID_ATTN_COUNT, RESID_COUNT


@dataclass
class BlockValues:
    acts: Sequence[float]  # ACT_COLUMNS sums
    grad_squares: Sequence[float]  # one per ROLES entry
    update_square: float
    param_square: float
    attn_max: float


def split_blocks(acts, grads, updates, attn_max, blocks: int) -> List[BlockValues]:
    roles = len(ROLES)
    return [BlockValues(acts[b * ACT_COLUMNS:(b + 1) * ACT_COLUMNS], grads[b * roles:(b + 1) * roles],
                        updates[b], updates[blocks + b], attn_max[b]) for b in range(blocks)]


def _ratio(total: float, count: float) -> Optional[float]:
    return total / count if count > 0 else None


def layer_record(values: BlockValues, roles: Sequence[str], grad_scale: float, has_resid_attn: bool,
                 update_ratio: bool) -> Dict:
    """One block's entry of "layers": only what was measured (a missing key means not measured)."""
    record = {}
    resid = _ratio(values.acts[RESID], values.acts[RESID_COUNT])
    if resid is not None:
        record["resid"] = resid
    if has_resid_attn:
        resid_attn = _ratio(values.acts[RESID_ATTN], values.acts[RESID_ATTN_COUNT])
        if resid_attn is not None:
            record["resid_attn"] = resid_attn
    record["grad"] = {role: math.sqrt(values.grad_squares[ROLES.index(role)]) * grad_scale for role in roles}
    if update_ratio and values.param_square > 0:
        record["update_ratio"] = math.sqrt(values.update_square / values.param_square)
    if values.acts[ENTROPY_ROWS] > 0:
        record["attn_entropy"] = values.acts[ENTROPY] / values.acts[ENTROPY_ROWS]
        record["attn_max_logit"] = values.attn_max
    return record


def first_bad_block(blocks: Sequence[BlockValues]) -> Optional[int]:
    """The engine's rule: the first block whose residual sum is not finite, else the last block with a
    non-finite gradient (the first that backward reached)."""
    for b, values in enumerate(blocks):
        if not (math.isfinite(values.acts[RESID]) and math.isfinite(values.acts[RESID_ATTN])):
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
