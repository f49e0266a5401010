# The device-side measurements of one logged step, kept as tensors (no host synchronisation): residual
# sums, norm scales, output logits and attention samples (q/k RMS, per-head largest logit) from forward
# hooks, gradient squares per block and role, and the update / parameter squares around optimizer.step().
from __future__ import annotations

import functools
from typing import List, Optional

import torch

from .layout import NORM_ROLES, ROLES, Layout, is_dtensor, replicas

# Columns of the per-block activation buffer (summed over micro-batches and processes): residual sums
# and their counts, attention entropy and rows, the queries' and keys' squares and counts, then the
# (sum, squares, count) of each NORM_ROLES entry's per-token scale.
RESID, RESID_COUNT, RESID_ATTN, RESID_ATTN_COUNT, ENTROPY, ENTROPY_ROWS, Q_SQUARES, Q_COUNT, K_SQUARES, K_COUNT = \
    range(10)
NORM_SCALES = 10
ACT_COLUMNS = NORM_SCALES + 3 * len(NORM_ROLES)
# The run-level sums: log Z over positions, logits over positions x vocabulary, the final norm's scale.
LOG_Z_SUM, LOG_Z_COUNT, LOGIT_SUM, LOGIT_COUNT, FINAL_SCALE = range(5)
RUN_COLUMNS = FINAL_SCALE + 3
# The run-level maxima (a MAX over processes, like each head's largest attention logit).
LOG_Z_MAX_ABS, LOGIT_MAX = range(2)


def norm_column(role: str) -> int:
    return NORM_SCALES + 3 * NORM_ROLES.index(role)


def local(tensor: torch.Tensor) -> torch.Tensor:
    """A DTensor's shard on this rank; a plain tensor itself."""
    return tensor.to_local() if is_dtensor(tensor) else tensor


def _add_moments(row: torch.Tensor, values: torch.Tensor):
    """(sum, sum of squares, count) of values added into a 3-slot view of a buffer."""
    v = values.double()
    row[0] += v.sum()
    row[1] += v.square().sum()
    row[2] += v.numel()


@functools.lru_cache(maxsize=None)
def _below_threshold(bound: float, dtype: torch.dtype) -> float:
    """The value t of `dtype` with v < t exactly when v < bound for every v of that dtype: bound rounded
    up, not to nearest. eps^2 = 1e-8 rounds down in float32, to a value v can hold while sqrt(v) < eps:
    comparing with the rounded bound missed that coordinate (the oracle compares sqrt(v) in float64)."""
    t = torch.tensor(bound, dtype=dtype)
    if float(t) < bound:
        t = torch.nextafter(t, torch.tensor(float("inf"), dtype=dtype))
    return float(t)

class Measurements:
    def __init__(self, layout: Layout, world_size: int, device: torch.device):
        blocks = len(layout.blocks)
        self.blocks = blocks
        self.device = device
        self.acts = torch.zeros(blocks, ACT_COLUMNS, dtype=torch.float64, device=device)
        self.run_acts = torch.zeros(RUN_COLUMNS, dtype=torch.float64, device=device)
        self.head_max = self._no_maxima(blocks, layout.heads or 1)
        self.run_max = self._no_maxima(2)
        # Every trainable parameter counts in the global norm; block weights also in their role's slot.
        slot_of, block_of = {}, {}
        for b, roles in enumerate(layout.roles):
            for role, params in roles.items():
                for p in params:
                    slot_of[id(p)] = b * len(ROLES) + ROLES.index(role)
            for p in layout.blocks[b].parameters():
                block_of[id(p)] = b
        self.params: List[torch.nn.Parameter] = [p for p in layout.root.parameters() if p.requires_grad]
        self.slots = [slot_of.get(id(p), -1) for p in self.params]
        self.scales = [1.0 / replicas(p, world_size) for p in self.params]
        self.block_params = [(p, block_of[id(p)], 1.0 / replicas(p, world_size))
                             for p in self.params if id(p) in block_of]
        self.block_numel = [0] * blocks  # every element of the block's trainable parameters (all shards)
        for p, b, _ in self.block_params:
            self.block_numel[b] += p.numel()
        self.roles_present = [role for role in ROLES if any(role in r for r in layout.roles)]
        self._before = None

    def _no_maxima(self, *shape) -> torch.Tensor:
        return torch.full(shape, float("-inf"), dtype=torch.float64, device=self.device)

    def reset_step(self):
        self.acts.zero_()
        self.run_acts.zero_()
        self.head_max.fill_(float("-inf"))
        self.run_max.fill_(float("-inf"))

    def add_resid(self, block: int, hidden: torch.Tensor, column: int):
        h = hidden.detach().float()
        self.acts[block, column] += h.square().sum()
        self.acts[block, column + 1] += h.numel()  # resid = E||h||^2 / d = the mean square

    def add_attention(self, block: int, entropy_sum, rows, head_largest: torch.Tensor):
        """A sample's entropy sum and rows, and each head's largest logit [H]."""
        if self.head_max.shape[1] != head_largest.shape[0]:  # heads the model did not say: from the sample
            self.head_max = self._no_maxima(self.blocks, head_largest.shape[0])
        self.acts[block, ENTROPY] += entropy_sum
        self.acts[block, ENTROPY_ROWS] += rows
        self.head_max[block] = torch.maximum(self.head_max[block], head_largest.double())

    def add_qk(self, block: int, q: torch.Tensor, k: torch.Tensor):
        """Squares and counts of every query and key of the batch (q_rms, k_rms): RoPE rotates pairs of
        coordinates, so the RMS after it is the RMS before."""
        for tensor, column in ((q, Q_SQUARES), (k, K_SQUARES)):
            self.acts[block, column] += tensor.detach().float().square().sum()
            self.acts[block, column + 1] += tensor.numel()

    def add_norm_scale(self, block: Optional[int], role: Optional[str], scales: torch.Tensor):
        """Per-token scales of a block's norm (role in NORM_ROLES), or of the final norm (block None)."""
        if block is None:
            _add_moments(self.run_acts[FINAL_SCALE:FINAL_SCALE + 3], scales)
        else:
            column = norm_column(role)
            _add_moments(self.acts[block, column:column + 3], scales)

    def add_logits(self, logits: torch.Tensor):
        """log Z = logsumexp over the vocabulary of each position, and the logits themselves."""
        values = logits.detach().float()
        log_z = torch.logsumexp(values, dim=-1)
        self.run_acts[LOG_Z_SUM] += log_z.double().sum()
        self.run_acts[LOG_Z_COUNT] += log_z.numel()
        self.run_acts[LOGIT_SUM] += values.sum(dim=-1).double().sum()  # per position, then in float64
        self.run_acts[LOGIT_COUNT] += values.numel()
        self.run_max[LOG_Z_MAX_ABS] = torch.maximum(self.run_max[LOG_Z_MAX_ABS], log_z.abs().max().double())
        self.run_max[LOGIT_MAX] = torch.maximum(self.run_max[LOGIT_MAX], values.max().double())

    def maxima(self) -> torch.Tensor:
        """[each block's heads' largest logits, then the run-level maxima]: one MAX over processes."""
        return torch.cat([self.head_max.flatten(), self.run_max])

    def grad_squares(self) -> torch.Tensor:
        """[blocks x roles slots, then the global total] of squared gradient norms, each divided by the
        ranks holding the same gradient, so one SUM over the world gives the true squares."""
        grads, slots, scales = [], [], []
        for p, slot, scale in zip(self.params, self.slots, self.scales):
            if p.grad is not None:
                grads.append(local(p.grad))
                slots.append(slot)
                scales.append(scale)
        out = torch.zeros(self.blocks * len(ROLES) + 1, dtype=torch.float64, device=self.device)
        if not grads:
            return out
        squares = self._squares(grads, scales)
        in_block = [i for i, s in enumerate(slots) if s >= 0]
        if in_block:
            index = torch.tensor(in_block, device=self.device)
            out.index_add_(0, torch.tensor([slots[i] for i in in_block], device=self.device), squares[index])
        out[-1] = squares.sum()
        return out

    def snapshot(self):
        """Copies of the block parameters before optimizer.step(), for the update ratio."""
        self._before = [local(p).detach().clone() for p, _, _ in self.block_params]

    def update_squares(self) -> torch.Tensor:
        """[update squares per block, parameter squares per block] after optimizer.step()."""
        out = torch.zeros(2 * self.blocks, dtype=torch.float64, device=self.device)
        if self._before is None or not self.block_params:
            return out
        now = [local(p).detach() for p, _, _ in self.block_params]
        scales = [s for _, _, s in self.block_params]
        blocks = torch.tensor([b for _, b, _ in self.block_params], device=self.device)
        out.index_add_(0, blocks, self._squares(torch._foreach_sub(now, self._before), scales))
        out.index_add_(0, blocks + self.blocks, self._squares(now, scales))
        self._before = None
        return out

    def second_moments(self, optimizer) -> Optional[torch.Tensor]:
        """Adam's second moment v (exp_avg_sq, as stored: not bias-corrected) after optimizer.step(), per
        block: [sum of v, coordinates with sqrt(v) < the group's eps, coordinates], each divided by the
        ranks holding the same values like the squares; None for an optimizer without exp_avg_sq."""
        eps = {id(p): group["eps"] for group in optimizer.param_groups if "eps" in group for p in group["params"]}
        entries = []
        for p, block, scale in self.block_params:
            v = optimizer.state.get(p, {}).get("exp_avg_sq")
            if isinstance(v, torch.Tensor) and id(p) in eps:
                entries.append((local(v).detach(), block, scale, eps[id(p)]))
        if not entries:
            return None
        moments = [v for v, _, _, _ in entries]
        sums = torch.stack(torch._foreach_norm(moments, 1)).double()  # v >= 0: its L1 norm is its sum
        below = torch.stack([(v < _below_threshold(e * e, v.dtype)).sum() for v, _, _, e in entries]).double()
        counts = torch.tensor([float(v.numel()) for v in moments], dtype=torch.float64, device=self.device)
        scales = torch.tensor([s for _, _, s, _ in entries], dtype=torch.float64, device=self.device)
        index = torch.tensor([b for _, b, _, _ in entries], device=self.device)
        out = torch.zeros(3 * self.blocks, dtype=torch.float64, device=self.device)
        for part, values in enumerate((sums, below, counts)):
            out.index_add_(0, index + part * self.blocks, values.to(self.device) * scales)
        return out

    def _squares(self, tensors, scales) -> torch.Tensor:
        norms = torch._foreach_norm(tensors, 2, dtype=torch.float32)
        squares = torch.stack(norms).to(torch.float64).square()
        return squares * torch.tensor(scales, dtype=torch.float64, device=squares.device)
