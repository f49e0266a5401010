# Attention statistics from a model's real queries and keys (after rotary embeddings, with its mask):
# the mean row entropy (nats) and each head's largest scaled logit over a sample of query rows of one
# sequence.
# Queries and keys come from Hugging Face's attention interface, a fused qkv projection, or the user.
from __future__ import annotations

from typing import Callable, Optional

import torch

# The recorder that receives samples (set by the active Watch); None when nothing is watched.
_sink: Optional[Callable] = None


def attention_sample_stats(q, k, scale, mask=None, causal=True, rows=256):
    """(entropy sum, rows counted, each head's largest logit [H]) over heads x sampled query rows of the
    first sequence.
    q: [B, H, T, d], k: [B, Hk, S, d] (Hk divides H: grouped keys are repeated); mask: None, or a
    [B, 1|H, T, S] bool (True = attend) or additive float mask, as Hugging Face passes them."""
    q0 = q[0].detach().float()
    k0 = k[0].detach().float()
    if k0.shape[0] != q0.shape[0]:
        k0 = k0.repeat_interleave(q0.shape[0] // k0.shape[0], dim=0)
    length, keys = q0.shape[1], k0.shape[1]
    picked = torch.arange(length, device=q0.device)
    if length > rows:
        picked = torch.linspace(0, length - 1, rows, device=q0.device).round().long()
    logits = torch.matmul(q0[:, picked], k0.transpose(-1, -2)) * scale  # [H, R, S]
    if mask is not None:
        m = mask[0][:, picked].to(q0.device)
        allowed = m if m.dtype == torch.bool else m > torch.finfo(m.dtype).min / 2
        allowed = allowed.expand_as(logits)
    elif causal:
        offset = keys - length  # keys before the queries (a cache); 0 in training
        allowed = torch.arange(keys, device=q0.device)[None, :] <= (picked[:, None] + offset)
        allowed = allowed.expand_as(logits)
    else:
        allowed = torch.ones_like(logits, dtype=torch.bool)
    masked = logits.masked_fill(~allowed, float("-inf"))
    valid = allowed.any(dim=-1)  # rows with at least one key to attend to
    log_p = torch.log_softmax(masked.masked_fill(~valid[..., None], 0.0), dim=-1)
    entropy = -(log_p.exp() * log_p.masked_fill(~allowed, 0.0)).sum(dim=-1)
    entropy_sum = entropy.masked_fill(~valid, 0.0).sum()
    head_largest = masked.masked_fill(~valid[..., None], float("-inf")).amax(dim=(1, 2))
    return entropy_sum, valid.sum(), head_largest


def record_attention(q, k, scale=None, mask=None, causal=True):
    """Call from your own attention code with queries [B, H, T, d] and keys [B, Hk, S, d] (after rotary
    embeddings) to give a plain model attention telemetry; a no-op unless a watched step samples it."""
    if _sink is not None:
        _sink(None, q, k, scale if scale is not None else q.shape[-1] ** -0.5, mask, causal)


def install_hf_interface(root):
    """Routes a Hugging Face model's attention through a wrapper of its current implementation that
    hands queries and keys to the active recorder, then calls the original. Returns the original name."""
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    base = root.config._attn_implementation or "eager"
    if base.startswith("normlab_"):
        return base[len("normlab_"):]
    if base == "eager":
        import sys

        attention_module = next(m for m in root.modules() if hasattr(m, "is_causal") and hasattr(m, "layer_idx"))
        original = sys.modules[type(attention_module).__module__].eager_attention_forward
    else:
        original = ALL_ATTENTION_FUNCTIONS[base]

    def wrapped(module, query, key, value, attention_mask, **kwargs):
        if _sink is not None:
            scaling = kwargs.get("scaling")
            _sink(module, query, key, scaling if scaling is not None else query.shape[-1] ** -0.5,
                  attention_mask, getattr(module, "is_causal", True))
        return original(module, query, key, value, attention_mask, **kwargs)

    name = f"normlab_{base}"
    AttentionInterface.register(name, wrapped)
    ALL_MASK_ATTENTION_FUNCTIONS.register(name, ALL_MASK_ATTENTION_FUNCTIONS[base])
    root.set_attn_implementation(name)
    return base


def qkv_split_hook(n_head: int, sink: Callable):
    """A forward hook for a fused projection x -> [q | k | v] (nanoGPT's and GPT-2's c_attn): causal."""

    def hook(module, inputs, output):
        batch, length, width = output.shape
        d = width // 3
        q = output[..., :d].view(batch, length, n_head, d // n_head).transpose(1, 2)
        k = output[..., d:2 * d].view(batch, length, n_head, d // n_head).transpose(1, 2)
        sink(module, q, k, (d // n_head) ** -0.5, None, True)

    return hook
