# The norms the bridge recognises (torch's LayerNorm and RMSNorm, Hugging Face's *RMSNorm such as
# LlamaRMSNorm, nanoGPT's LayerNorm) with their kind and eps, and the engine's per-token scale of a norm:
# 1/std = 1/sqrt(Var + eps) for LayerNorm, 1/sqrt(mean square + eps) for RMSNorm (engine's rstd).
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn

LAYERNORM, RMSNORM = "layernorm", "rmsnorm"  # the engine's model.norm_type values
NANOGPT_LAYERNORM_EPS = 1e-5  # nanoGPT's LayerNorm class calls F.layer_norm with this constant


@dataclass(frozen=True)
class NormKind:
    kind: str  # LAYERNORM or RMSNORM
    eps: Optional[float]  # None: torch.finfo(input dtype).eps, as nn.RMSNorm(eps=None) does
    dims: int  # how many trailing dimensions are normalised


def _trailing_dims(module) -> int:
    shape = getattr(module, "normalized_shape", None)
    return len(shape) if isinstance(shape, (tuple, list)) else 1


def recognise(module: nn.Module) -> Optional[NormKind]:
    """The module's kind and eps when the bridge knows how it normalises, else None."""
    if isinstance(module, nn.LayerNorm):
        return NormKind(LAYERNORM, module.eps, _trailing_dims(module))
    if isinstance(module, nn.RMSNorm):
        return NormKind(RMSNORM, module.eps, _trailing_dims(module))
    name = type(module).__name__
    if name.endswith("RMSNorm"):  # LlamaRMSNorm, Qwen2RMSNorm, MistralRMSNorm, ...
        eps = getattr(module, "variance_epsilon", getattr(module, "eps", None))
        return NormKind(RMSNORM, float(eps), 1) if isinstance(eps, (int, float)) else None
    if name == "LayerNorm" and isinstance(getattr(module, "weight", None), torch.Tensor):
        return NormKind(LAYERNORM, float(getattr(module, "eps", NANOGPT_LAYERNORM_EPS)), 1)
    return None


def token_scales(x: torch.Tensor, norm: NormKind) -> torch.Tensor:
    """Each token's 1/std (float32), the scale the norm multiplies it by before its gain."""
    eps = norm.eps if norm.eps is not None else torch.finfo(x.dtype).eps
    x = x.detach().float()
    dims = tuple(range(-norm.dims, 0))
    if norm.kind == LAYERNORM:  # two passes: ten times faster than torch.var on a CPU thread, as exact
        x = x - x.mean(dim=dims, keepdim=True)
    return torch.rsqrt(x.square().mean(dim=dims) + eps)


def owner_of(block: nn.Module, param: torch.Tensor) -> Optional[nn.Module]:
    """The sub-module of `block` whose own `weight` is `param` (a norm role's gain), or None."""
    for module in block.modules():
        if module._parameters.get("weight") is param:
            return module
    return None


def final_norm(root: nn.Module, blocks) -> Optional[nn.Module]:
    """The decoder's final norm: the last recognised norm registered after the last block and outside
    every block (GPT-2's ln_f, Llama's model.norm); None when there is none."""
    inside = {id(m) for block in blocks for m in block.modules()}
    last_block = id(blocks[-1])
    after, found = False, None
    for module in root.modules():
        if id(module) == last_block:
            after = True
        elif after and id(module) not in inside and recognise(module) is not None:
            found = module
    return found
