# The device-side measurements of one logged step, kept as tensors (no host synchronisation): residual
# sums and attention samples from forward hooks, gradient squares per block and role from the grads the
# optimizer is about to use, and the update / parameter squares around optimizer.step().
from __future__ import annotations

from typing import List

import torch

from .layout import ROLES, Layout, is_dtensor, replicas

# Columns of the per-block activation buffer.
RESID, RESID_COUNT, RESID_ATTN, RESID_ATTN_COUNT, ENTROPY, ENTROPY_ROWS = range(6)
ACT_COLUMNS = 6


def local(tensor: torch.Tensor) -> torch.Tensor:
    """A DTensor's shard on this rank; a plain tensor itself."""
    return tensor.to_local() if is_dtensor(tensor) else tensor


class Measurements:
    def __init__(self, layout: Layout, world_size: int, device: torch.device):
        blocks = len(layout.blocks)
        self.blocks = blocks
        self.device = device
        self.acts = torch.zeros(blocks, ACT_COLUMNS, dtype=torch.float64, device=device)
        self.attn_max = torch.full((blocks,), float("-inf"), dtype=torch.float64, device=device)
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
        self.roles_present = [role for role in ROLES if any(role in r for r in layout.roles)]
        self._before = None

    def reset_step(self):
        self.acts.zero_()
        self.attn_max.fill_(float("-inf"))

    def add_resid(self, block: int, hidden: torch.Tensor, column: int):
        h = hidden.detach().float()
        self.acts[block, column] += h.square().sum()
        self.acts[block, column + 1] += h.numel()  # resid = E||h||^2 / d = the mean square

    def add_attention(self, block: int, entropy_sum, rows, largest):
        self.acts[block, ENTROPY] += entropy_sum
        self.acts[block, ENTROPY_ROWS] += rows
        self.attn_max[block] = torch.maximum(self.attn_max[block], largest.double())

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

    def _squares(self, tensors, scales) -> torch.Tensor:
        norms = torch._foreach_norm(tensors, 2, dtype=torch.float32)
        squares = torch.stack(norms).to(torch.float64).square()
        return squares * torch.tensor(scales, dtype=torch.float64, device=squares.device)
