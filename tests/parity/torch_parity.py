#!/usr/bin/env python3
"""Parity with PyTorch: for each model variant, normlab-cli dump-grads writes a checkpoint (after a few
training steps) and the gradients of the next batch; this script rebuilds the same model in PyTorch
(float64) from the checkpoint alone and compares the loss and every gradient (relative error 1e-4)."""
import argparse
import json
import math
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import os

# Without PyTorch the test skips (ctest SKIP_RETURN_CODE 77) with a message, except under scripts/test.sh,
# which installs python3-torch and sets NORMLAB_REQUIRE_TORCH=1 so that a missing torch fails instead.
try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as missing:
    required = os.environ.get("NORMLAB_REQUIRE_TORCH") == "1"
    print(f"torch_parity: {'FAILED' if required else 'SKIPPED'}: {missing} for {sys.executable} "
          "(Debian: apt-get install python3-torch python3-numpy)", file=sys.stderr)
    sys.exit(1 if required else 77)

TOLERANCE = 1e-4
SMALL_MODEL = ["model.d_model=32", "model.heads=4", "model.d_ff=64", "model.layers=3", "model.seq_len=16",
               "train.batch_size=4", "train.lr=3e-3"]
CASES = {
    "post": ["model.norm_placement=post"],
    "pre": ["model.norm_placement=pre"],
    "peri": ["model.norm_placement=peri"],
    "none": ["model.norm_placement=none"],
    "deepnorm": ["model.norm_placement=post", "model.residual=deepnorm"],
    "rezero": ["model.norm_placement=none", "model.residual=rezero"],
    # LayerNorm Scaling (Sun et al. 2025): block l's input norms' outputs x 1/sqrt(l), l from 1 per stack
    "lns": ["model.norm_placement=pre", "model.residual=lns"],
    "lns-mix-dyt": ["model.norm_placement=mix", "model.mix_post_fraction=0.34", "model.norm_type=dyt",
                    "model.residual=lns"],
    # B2T (Takase et al. 2022): a Post-LN block's input added to its last sum, before the last norm
    "b2t": ["model.norm_placement=post", "model.residual=b2t"],
    "b2t-mix-rmsnorm": ["model.norm_placement=mix", "model.mix_post_fraction=0.67", "model.norm_type=rmsnorm",
                        "model.residual=b2t"],
    "encdec-b2t-dyt": ["model.encoder_layers=2", "model.norm_placement=post", "model.norm_type=dyt",
                       "model.residual=b2t"],
    # ResiDual (Xie et al. 2023): Post-LN plus the final norm of an unnormalised sum of every branch
    "resi-dual": ["model.norm_placement=post", "model.residual=resi_dual"],
    "resi-dual-rmsnorm-warmup": ["model.norm_placement=post", "model.norm_type=rmsnorm", "model.residual=resi_dual",
                                 "model.residual_warmup_steps=3"],
    "encdec-resi-dual-dyt": ["model.encoder_layers=2", "model.norm_placement=post", "model.norm_type=dyt",
                             "model.residual=resi_dual"],
    # DenseFormer (Pagliardini et al. 2024): each block reads a learned average of the earlier outputs
    "denseformer": ["model.norm_placement=pre", "model.residual=denseformer"],
    # (Post-LN's block 1 normalises alpha B_1 when block 0's average reads its own output alone: that weight's
    # gradient nearly cancels, below float32's resolution against PyTorch's float64; hence dilation under mix)
    "denseformer-post": ["model.norm_placement=post", "model.residual=denseformer"],
    "denseformer-mix-dilation2": ["model.norm_placement=mix", "model.mix_post_fraction=0.34",
                                  "model.residual=denseformer", "model.denseformer_dilation=2"],
    "encdec-denseformer-peri-rmsnorm": ["model.encoder_layers=2", "model.norm_placement=peri",
                                        "model.norm_type=rmsnorm", "model.residual=denseformer"],
    # Attention Residuals; lr 3e-2 so that three Adam steps move the zero-initialised queries off a plain
    # average and the scores depend on the keys
    "attn-res": ["model.norm_placement=pre", "model.residual=attn_res", "train.lr=3e-2"],
    "attn-res-peri-dyt": ["model.norm_placement=peri", "model.norm_type=dyt", "model.residual=attn_res",
                          "train.lr=3e-2"],
    "attn-res-none-warmup": ["model.norm_placement=none", "model.residual=attn_res",
                             "model.residual_warmup_steps=4", "train.lr=3e-2"],
    "attn-res-theory-rmsnorm": ["model.theory_mode=true", "model.norm_placement=pre", "model.norm_type=rmsnorm",
                                "model.residual=attn_res", "train.lr=3e-2"],
    "encdec-lns-peri-rmsnorm": ["model.encoder_layers=2", "model.norm_placement=peri", "model.norm_type=rmsnorm",
                                "model.residual=lns"],
    "admin": ["model.norm_placement=post", "model.residual=admin", "model.admin_init=profiled"],
    "rmsnorm": ["model.norm_placement=pre", "model.norm_type=rmsnorm"],
    # BatchNorm through its batch statistics; PowerNorm on the checkpoint's psi^2 with its approximate
    # backward (nu, moved by the three training steps)
    "batchnorm-pre": ["model.norm_placement=pre", "model.norm_type=batchnorm"],
    "batchnorm-post-encdec": ["model.encoder_layers=2", "model.norm_placement=post", "model.norm_type=batchnorm"],
    "powernorm-pre": ["model.norm_placement=pre", "model.norm_type=powernorm", "train.lr=3e-2"],
    "powernorm-peri-deepnorm": ["model.norm_placement=peri", "model.norm_type=powernorm", "model.residual=deepnorm",
                                "model.bn_momentum=0.3"],
    "dyt": ["model.norm_placement=pre", "model.norm_type=dyt"],
    "peri-rmsnorm-gelu": ["model.norm_placement=peri", "model.norm_type=rmsnorm", "model.activation=gelu"],
    "theory-post": ["model.theory_mode=true", "model.norm_placement=post"],
    "copy-task-sgd": ["data.task=copy", "train.optimizer=sgd", "train.lr=0.1"],
    # encoder-decoders (model.encoder_layers): the copy task's source, and text's first half
    "encdec-post-copy": ["model.encoder_layers=2", "model.norm_placement=post", "data.task=copy"],
    "encdec-pre": ["model.encoder_layers=2", "model.norm_placement=pre"],
    "encdec-peri-rmsnorm": ["model.encoder_layers=2", "model.norm_placement=peri", "model.norm_type=rmsnorm"],
    "encdec-theory-pre": ["model.encoder_layers=2", "model.theory_mode=true", "model.norm_placement=pre"],
    "encdec-theory-post": ["model.encoder_layers=2", "model.theory_mode=true", "model.norm_placement=post"],
    "encdec-deepnorm": ["model.encoder_layers=3", "model.norm_placement=post", "model.residual=deepnorm"],
    "encdec-admin": ["model.encoder_layers=2", "model.norm_placement=post", "model.residual=admin",
                     "model.admin_init=profiled"],
    "encdec-rezero": ["model.encoder_layers=2", "model.norm_placement=none", "model.residual=rezero"],
    # QK-norm: each head's q and k normalised over the head dimension, one gain per head dimension
    "qk-layernorm": ["model.norm_placement=pre", "model.qk_norm=layernorm"],
    "qk-rmsnorm-post": ["model.norm_placement=post", "model.qk_norm=rmsnorm"],
    "encdec-qk-rmsnorm": ["model.encoder_layers=2", "model.norm_placement=pre", "model.qk_norm=rmsnorm"],
    # z-loss: + z_loss (log Z)^2 per scored position (a large coefficient, so its gradient term matters)
    "z-loss": ["model.norm_placement=pre", "train.z_loss=0.05"],
    # Mix-LN: the first floor(fraction x blocks) blocks Post-LN, the rest Pre-LN, per stack
    "mix": ["model.norm_placement=mix", "model.mix_post_fraction=0.34"],
    "encdec-mix-rmsnorm": ["model.encoder_layers=2", "model.norm_placement=mix", "model.mix_post_fraction=0.5",
                           "model.norm_type=rmsnorm"],
    # the model's own warmups at step 4 (dump-grads trains 3 steps): every norm gain at 0.1 + 0.9 x 3/10,
    # ProRes's branch scales min(1, 4 / (3 l)) = 1, 0.67, 0.44
    "gain-warmup-post": ["model.norm_placement=post", "model.norm_gain_warmup_steps=10"],
    "residual-warmup-peri-dyt": ["model.norm_placement=peri", "model.norm_type=dyt", "model.residual_warmup_steps=3"],
    "encdec-z-loss-copy": ["model.encoder_layers=2", "model.norm_placement=post", "data.task=copy",
                           "train.z_loss=0.05"],
    # the architecture keys (docs/model.md#architecture-keys), against Hugging Face Llama's maths
    "llama-like": ["model.norm_placement=pre", "model.norm_type=rmsnorm", "model.ffn=swiglu",
                   "model.position=rope", "model.bias=false", "model.tie_embeddings=true", "model.kv_heads=2"],
    "llama-qk-norm-rope-mqa": ["model.norm_placement=pre", "model.norm_type=rmsnorm", "model.ffn=swiglu",
                               "model.position=rope", "model.rope_theta=500", "model.qk_norm=rmsnorm",
                               "model.bias=false", "model.kv_heads=1"],
    "gqa-learned-biases": ["model.norm_placement=post", "model.kv_heads=2"],
    "mqa-qk-layernorm-rope": ["model.norm_placement=pre", "model.qk_norm=layernorm", "model.position=rope",
                              "model.kv_heads=1"],
    "gelu-tanh": ["model.norm_placement=pre", "model.activation=gelu_tanh"],
    "gpt2-shape": ["model.norm_placement=pre", "model.activation=gelu", "model.tie_embeddings=true"],
    "geglu-no-positions-post": ["model.norm_placement=post", "model.ffn=geglu", "model.position=none",
                                "model.bias=false"],
    "encdec-rope-swiglu-tied-gqa": ["model.encoder_layers=2", "model.norm_placement=pre", "model.ffn=swiglu",
                                    "model.position=rope", "model.tie_embeddings=true", "model.bias=false",
                                    "model.qk_norm=layernorm", "model.kv_heads=2"],
    # muP (Yang et al. 2022) at twice its base width (d_model 32, base 16): attention logits over d_head
    # (SP's 1/sqrt(d_head) at the base), logits times base / width; a tied head and GQA with RoPE; a
    # model narrower than its base (m = 1/2)
    "mup-pre": ["model.norm_placement=pre", "model.parametrization=mup", "model.base_width=16"],
    "mup-tied-gqa-rope-narrow": ["model.norm_placement=pre", "model.norm_type=rmsnorm", "model.position=rope",
                                 "model.tie_embeddings=true", "model.kv_heads=2", "model.parametrization=mup",
                                 "model.base_width=64"],
    # CompleteP (Dey et al. 2025, alpha = 1): muP's width rules and every branch times base depth / layers
    "completep-pre": ["model.norm_placement=pre", "model.parametrization=completep", "model.base_width=16",
                      "model.base_depth=1"],
    "completep-peri-dyt": ["model.norm_placement=peri", "model.norm_type=dyt", "model.parametrization=completep",
                           "model.base_width=64", "model.base_depth=6"],
}
DTYPES = {"F32": np.float32, "F64": np.float64}


def read_safetensors(path):
    """A minimal safetensors reader: (tensors as float64 numpy arrays, metadata)."""
    blob = Path(path).read_bytes()
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_len])
    metadata = header.pop("__metadata__", {})
    data = blob[8 + header_len:]
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        array = np.frombuffer(data[begin:end], dtype=DTYPES[info["dtype"]]).astype(np.float64)
        tensors[name] = array.reshape(info["shape"])
    return tensors, metadata


GAIN_SCALE = [1.0]  # norm-gain warmup's factor at the step being checked (set per case)
# BatchNorm's and PowerNorm's running statistics in the checkpoint: state, not parameters (set per case)
STATE_SUFFIXES = (".running_mean", ".running_var", ".running_phi", ".nu")
STATE = {}


class PowerNormTraining(torch.autograd.Function):
    """PowerNorm in training (Shen et al. 2020, Algorithm 1), written from the paper: forward divides by
    the running quadratic mean psi of the steps before; the approximate backward subtracts nu xhat."""

    @staticmethod
    def forward(ctx, x, weight, bias, phi, nu, eps):
        scale = torch.rsqrt(phi + eps)
        xhat = x * scale
        ctx.save_for_backward(xhat, weight, scale, nu)
        return weight * xhat + bias

    @staticmethod
    def backward(ctx, dy):
        xhat, weight, scale, nu = ctx.saved_tensors
        rows = tuple(range(dy.dim() - 1))
        dx = (dy * weight - nu * xhat) * scale
        return dx, (dy * xhat).sum(rows), dy.sum(rows), None, None, None


def norm(params, prefix, x, norm_type, eps):
    weight = GAIN_SCALE[0] * params[prefix + ".weight"]
    if norm_type == "layernorm":
        return F.layer_norm(x, (x.shape[-1],), weight, params[prefix + ".bias"], eps)
    if norm_type == "rmsnorm":
        return weight * x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps)
    if norm_type == "batchnorm":  # each feature over batch and positions, the batch's own statistics
        flat = x.reshape(-1, x.shape[-1])
        return F.batch_norm(flat, None, None, weight, params[prefix + ".bias"], training=True,
                            eps=eps).reshape(x.shape)
    if norm_type == "powernorm":
        return PowerNormTraining.apply(x, weight, params[prefix + ".bias"], STATE[prefix + ".running_phi"],
                                       STATE[prefix + ".nu"], eps)
    return weight * torch.tanh(params[prefix + ".alpha"] * x) + params[prefix + ".bias"]


BASE_WIDTH = [None]  # muP's or CompleteP's base width for the case being checked (None: SP)


def multi_head(q, k, v, heads, mask):
    """Scaled dot-product attention over heads; `mask` [queries, keys] is True where a key is hidden.
    Under muP the logits scale as 1 / d_head (Tensor Programs V, section 3), equal to SP's 1 / sqrt(d_head)
    at the base width: sqrt(base d_head) / d_head."""
    batch, queries, d = q.shape
    head_dim = d // heads
    q, k, v = (t.reshape(batch, t.shape[1], heads, head_dim).transpose(1, 2) for t in (q, k, v))
    scale = 1.0 / math.sqrt(head_dim)
    if BASE_WIDTH[0]:
        scale = math.sqrt(BASE_WIDTH[0] / heads) / head_dim
    scores = q @ k.transpose(-1, -2) * scale
    probs = scores.masked_fill(mask, float("-inf")).softmax(-1)
    return (probs @ v).transpose(1, 2).reshape(batch, queries, d)


def causal_mask(seq):
    """The decoder's self-attention hides the future."""
    return torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)


def source_mask(seq, source_len):
    """The encoder's self-attention and cross-attention read only the source's keys, j < source_len."""
    return (torch.arange(seq) >= source_len).expand(seq, seq)


def qk_norm(params, name, x, heads, kind, eps):
    """QK-norm: x [batch, positions, d] normalised per head over the head dimension, one gain [head_dim]
    shared by the heads, no bias."""
    if kind == "none":
        return x
    batch, positions, d = x.shape
    h = x.reshape(batch, positions, heads, d // heads)
    weight = params[name]
    if kind == "layernorm":
        h = F.layer_norm(h, (h.shape[-1],), weight, None, eps)
    else:
        h = weight * h * torch.rsqrt((h * h).mean(-1, keepdim=True) + eps)
    return h.reshape(batch, positions, d)


BIAS = [True]  # model.bias of the case being checked


def linear(params, name, x):
    """nn.Linear with the checkpoint's W[out, in], and its bias unless the model has none (model.bias)."""
    y = x @ params[name + ".weight"].T
    return y + params[name + ".bias"] if BIAS[0] else y


def rotate_half(x):
    """Hugging Face Llama's rotate_half: (x1, x2) -> (-x2, x1) over the two halves of the last dimension."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotary(x, heads, theta):
    """RoPE as Hugging Face Llama applies it: x [batch, positions, d] per head, x cos + rotate_half(x) sin,
    the frequencies theta^(-2i / head_dim) repeated over both halves."""
    batch, positions, d = x.shape
    head_dim = d // heads
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    freqs = torch.outer(torch.arange(positions, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)[:, None, :]  # [positions, 1, head_dim]
    h = x.reshape(batch, positions, heads, head_dim)
    return (h * emb.cos() + rotate_half(h) * emb.sin()).reshape(batch, positions, d)


def repeat_kv(x, kv_heads, group):
    """Hugging Face's repeat_kv: x [batch, positions, kv_heads x head_dim] -> each head `group` times in a
    row, so query head h reads key/value head h // group."""
    batch, positions, width = x.shape
    head_dim = width // kv_heads
    h = x.reshape(batch, positions, kv_heads, 1, head_dim).expand(batch, positions, kv_heads, group, head_dim)
    return h.reshape(batch, positions, kv_heads * group * head_dim)


def attention(params, prefix, u, heads, theory, mask, qk=("none", 1e-5), rope_theta=None, kv_heads=None):
    d = u.shape[-1]
    kv_heads = kv_heads or heads
    kv_width = d // heads * kv_heads
    q, k, v = linear(params, prefix + "attn.qkv", u).split([d, kv_width, kv_width], dim=-1)
    q = qk_norm(params, prefix + "attn.q_norm.weight", q, heads, *qk)
    k = qk_norm(params, prefix + "attn.k_norm.weight", k, kv_heads, *qk)
    if rope_theta is not None:  # after QK-norm, as OLMo 2
        q, k = rotary(q, heads, rope_theta), rotary(k, kv_heads, rope_theta)
    k, v = repeat_kv(k, kv_heads, heads // kv_heads), repeat_kv(v, kv_heads, heads // kv_heads)
    y = multi_head(q, k, v, heads, mask)
    if theory:
        return y
    return linear(params, prefix + "attn.out", y)


def cross_attention(params, prefix, u, memory, heads, theory, mask, qk=("none", 1e-5)):
    d = u.shape[-1]
    q = linear(params, prefix + "cross_attn.q", u)
    k, v = linear(params, prefix + "cross_attn.kv", memory).split(d, dim=-1)
    q = qk_norm(params, prefix + "cross_attn.q_norm.weight", q, heads, *qk)
    k = qk_norm(params, prefix + "cross_attn.k_norm.weight", k, heads, *qk)
    y = multi_head(q, k, v, heads, mask)
    if theory:
        return y
    return linear(params, prefix + "cross_attn.out", y)


def feed_forward(params, prefix, u, activation, ffn):
    """The MLP, or a gated FFN (Shazeer 2020; Llama's down(silu(gate(u)) * up(u)) with fc1 as up)."""
    up = linear(params, prefix + "ffn.fc1", u)
    if ffn == "mlp":
        hidden = (F.relu(up) if activation == "relu" else
                  F.gelu(up, approximate="tanh" if activation == "gelu_tanh" else "none"))
    else:
        gate = linear(params, prefix + "ffn.gate", u)
        hidden = (F.silu(gate) if ffn == "swiglu" else F.gelu(gate)) * up
    return linear(params, prefix + "ffn.fc2", hidden)


def deepnorm_shortcut(m, encoder):
    """DeepNorm's alpha: DeepNet's decoder-only constant, or its encoder-decoder pair."""
    if m["deepnorm_alpha"]:
        return m["deepnorm_alpha"]
    layers, encoder_layers = m["layers"], m["encoder_layers"]
    if not encoder_layers:
        return (2.0 * layers) ** 0.25
    if encoder:
        return 0.81 * (encoder_layers ** 4 * layers) ** (1.0 / 16.0)
    return (3.0 * layers) ** 0.25


def block_placement(m, block, layers):
    """A block's placement: the model's, or with Mix-LN Post-LN for the first floor(fraction x layers)."""
    if m["norm_placement"] != "mix":
        return m["norm_placement"]
    return "post" if block < math.floor(m["mix_post_fraction"] * layers + 1e-9) else "pre"


def stack(params, config, x, base, layers, self_mask, memory=None, memory_mask=None):
    """Residual blocks under `base` ("blocks." or "encoder.blocks."): self-attention, cross-attention to
    `memory` when given, FFN; each wired by the placement and residual scheme of docs/science.md (block variants)
    and docs/model.md (encoder-decoder mode)."""
    m = config["model"]
    theory = m["theory_mode"]
    norm_type, residual, eps = m["norm_type"], m["residual"], m["norm_eps"]
    heads = 1 if theory else m["heads"]
    activation = "relu" if theory else m["activation"]
    ffn = "mlp" if theory else m["ffn"]
    rope_theta = m["rope_theta"] if m["position"] == "rope" else None  # self-attention only
    kv_heads = None if theory else m["kv_heads"]  # grouped-query self-attention (0: heads)
    alpha = deepnorm_shortcut(m, encoder=base.startswith("encoder."))
    qk = (m["qk_norm"], eps)
    dual = x  # ResiDual (Xie et al. 2023): the stack's input plus every branch, never normalised
    outputs = [x]  # DenseFormer (Pagliardini et al. 2024): the stack's input, then each block's output
    values = [x]  # Attention Residuals (Kimi Team 2026): the stack's input, then each sub-layer's branch
    for i in range(layers):
        prefix = f"{base}{i}."
        placement = block_placement(m, i, layers)
        block_input = x  # B2T adds it to a Post-LN block's last sum
        kinds = ["attention", "cross", "ffn"] if memory is not None else ["attention", "ffn"]
        for kind in kinds:
            norm_name = {"attention": "norm1", "cross": "norm_cross", "ffn": "norm2"}[kind]
            u = norm(params, prefix + norm_name, x, norm_type, eps) if placement in ("pre", "peri") else x
            if residual == "lns" and placement in ("pre", "peri"):
                u = u / math.sqrt(i + 1)  # LayerNorm Scaling: the norm's output over sqrt(l), l = i + 1
            if kind == "attention":
                f = attention(params, prefix, u, heads, theory, self_mask, qk, rope_theta, kv_heads)
            elif kind == "cross":
                f = cross_attention(params, prefix, u, memory, heads, theory, memory_mask, qk)
            else:
                f = feed_forward(params, prefix, u, activation, ffn)
            if placement == "peri":
                f = norm(params, prefix + norm_name + "_out", f, norm_type, eps)
            if residual == "rezero":
                f = params[prefix + "rezero_alpha"] * f  # one a per block, shared by its sub-layers
            if m["residual_warmup_steps"]:  # ProRes: min(1, t / (T l)), l = i + 1
                f = min(1.0, config["step"] / (m["residual_warmup_steps"] * (i + 1))) * f
            if m["parametrization"] == "completep" and m["base_depth"]:  # depth-muP: branches x L_base / L
                f = (m["base_depth"] / layers) * f
            if residual == "attn_res":  # the next input: softmax over sources of w . RMSNorm(v), times v
                values.append(f)
                v = torch.stack(values)
                keys = v / torch.sqrt((v * v).mean(dim=-1, keepdim=True) + eps)
                query = params[prefix + "attn_res.queries"][kinds.index(kind)]
                weights = torch.softmax(keys @ query, dim=0)
                x = (weights.unsqueeze(-1) * v).sum(dim=0)
                continue
            shortcut = 1.0
            if residual == "deepnorm":
                shortcut = alpha
            elif residual == "admin" and kind == "cross":
                shortcut = params[prefix + "cross_attn.admin_omega"][0]
            elif residual == "admin":
                shortcut = params[prefix + "admin_omega"][0 if kind == "attention" else 1]
            s = shortcut * x + f
            dual = dual + f
            if residual == "b2t" and kind == "ffn" and placement == "post":
                s = s + block_input
            x = norm(params, prefix + norm_name, s, norm_type, eps) if placement == "post" else s
        if residual == "denseformer":  # the next block reads a learned average of outputs i+1, i+1-k, ...
            outputs.append(x)
            dilation = m["denseformer_dilation"]
            sources = range((i + 1) % dilation, i + 2, dilation)
            x = sum(params[prefix + "dwa"][t] * outputs[j] for t, j in enumerate(sources))
    if residual == "resi_dual" and layers:  # the stack's output: Post-LN's stream + its final norm of the dual
        final = "encoder.final_norm" if base.startswith("encoder.") else "final_norm"
        x = x + norm(params, final, dual, norm_type, eps)
    return x


def model_loss(params, config, inputs, targets, source_len):
    """The NormLab model of docs/model.md / docs/science.md (decoder-only, or with model.encoder_layers an
    encoder-decoder whose encoder reads the source positions [0, source_len)), written independently in
    PyTorch: (cross-entropy, z-loss term), both means over the scored positions."""
    m = config["model"]
    norm_type, eps = m["norm_type"], m["norm_eps"]
    seq = inputs.shape[1]
    embedded = params["wte.weight"][inputs]
    if m["position"] == "learned":
        embedded = embedded + params["wpe.weight"][:seq]
    memory = memory_mask = None
    if m["encoder_layers"]:
        memory_mask = source_mask(seq, source_len)
        memory = stack(params, config, embedded, "encoder.blocks.", m["encoder_layers"], memory_mask)
        if block_placement(m, m["encoder_layers"] - 1, m["encoder_layers"]) in ("pre", "peri"):
            memory = norm(params, "encoder.final_norm", memory, norm_type, eps)
        targets = targets.clone()
        targets[:, :max(source_len - 1, 0)] = -1  # targets the memory holds are not scored
    x = stack(params, config, embedded, "blocks.", m["layers"], causal_mask(seq), memory, memory_mask)
    if block_placement(m, m["layers"] - 1, m["layers"]) in ("pre", "peri"):
        x = norm(params, "final_norm", x, norm_type, eps)
    logits = x @ params["wte.weight" if m["tie_embeddings"] else "head.weight"].T
    if BASE_WIDTH[0]:  # muP's readout multiplier (MuReadout's 1 / width_mult), a tied head too
        logits = logits * (BASE_WIDTH[0] / m["d_model"])
    flat_logits, flat_targets = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
    cross_entropy = F.cross_entropy(flat_logits, flat_targets, ignore_index=-1)
    log_z = torch.logsumexp(flat_logits[flat_targets >= 0], dim=-1)
    return cross_entropy, config["train"]["z_loss"] * (log_z * log_z).mean()


def relative_error(ours, reference, floor=1e-12):
    scale = max(np.abs(reference).max(), floor)
    return float(np.abs(ours - reference).max() / scale)


def check_case(cli, name, overrides, workdir):
    out = Path(workdir) / name
    command = [cli, "dump-grads", "--preset", "quickstart", "--steps", "3", "--out", str(out)]
    for assignment in SMALL_MODEL + overrides:
        command += ["--set", assignment]
    out.mkdir(parents=True)
    subprocess.run(command, check=True, capture_output=True, text=True)
    checkpoint, metadata = read_safetensors(out / "model.safetensors")
    dumped, dump_meta = read_safetensors(out / "grads.safetensors")
    config = json.loads(metadata["normlab_config"])
    config["step"] = int(metadata["normlab_step"]) + 1  # the step the dumped gradients would train
    m = config["model"]
    GAIN_SCALE[0] = 1.0
    BIAS[0] = m["bias"]
    BASE_WIDTH[0] = (m["base_width"] or m["d_model"]) if m["parametrization"] in ("mup", "completep") else None
    if m["norm_gain_warmup_steps"]:
        progress = min(1.0, (config["step"] - 1) / m["norm_gain_warmup_steps"])
        GAIN_SCALE[0] = m["norm_gain_warmup_start"] + (1.0 - m["norm_gain_warmup_start"]) * progress
    STATE.clear()
    STATE.update({k: torch.tensor(v) for k, v in checkpoint.items() if k.endswith(STATE_SUFFIXES)})
    params = {k: torch.tensor(v, requires_grad=True) for k, v in checkpoint.items()
              if not k.startswith("optimizer.") and k not in STATE}
    inputs = torch.tensor(dumped["batch.inputs"], dtype=torch.long)
    targets = torch.tensor(dumped["batch.targets"], dtype=torch.long)
    loss, z_term = model_loss(params, config, inputs, targets, int(dump_meta.get("source_len", "0")))
    (loss + z_term).backward()
    failures = []
    ours_loss = float(dump_meta["loss"])
    loss_error = abs(ours_loss - loss.item()) / abs(loss.item())
    if loss_error > TOLERANCE:
        failures.append(f"loss {ours_loss} vs torch {loss.item()} (relative {loss_error:.2e})")
    ours_z = float(dump_meta["z_loss"])
    if abs(ours_z - z_term.item()) > TOLERANCE * max(abs(z_term.item()), 1e-12):
        failures.append(f"z-loss term {ours_z} vs torch {z_term.item()}")
    worst = ("", 0.0)
    largest = max(float(param.grad.abs().max()) for param in params.values())
    for tensor_name, param in params.items():
        grad_name = "grad." + tensor_name
        if grad_name not in dumped:
            failures.append(f"no gradient dumped for {tensor_name}")
            continue
        reference = param.grad.numpy()
        # A gradient that is 0 in exact arithmetic (a residual bias that every later BatchNorm takes out
        # again) is float32 noise in ours, which must stay below 1e-6 of the largest gradient.
        zero = np.abs(reference).max() < 1e-9 * largest
        error = relative_error(dumped[grad_name], reference, 1e-2 * largest if zero else 1e-12)
        worst = max(worst, (tensor_name, error), key=lambda item: item[1])
        if error > TOLERANCE:
            failures.append(f"{tensor_name}: relative error {error:.2e}")
    extra = {k[5:] for k in dumped if k.startswith("grad.")} - set(params)
    if extra:
        failures.append(f"gradients of tensors missing from the checkpoint: {sorted(extra)}")
    print(f"{name:24s} loss {ours_loss:.6f} (torch {loss.item():.6f}, rel {loss_error:.1e}); "
          f"{len(params)} gradients, worst {worst[0]} {worst[1]:.1e}: {'FAIL' if failures else 'ok'}")
    for failure in failures:
        print("    " + failure)
    return not failures


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cli", required=True, help="path to normlab-cli")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="only this case (repeatable)")
    args = parser.parse_args()
    cases = {name: CASES[name] for name in args.case} if args.case else CASES
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(prefix="normlab_parity_") as workdir:
        results = [check_case(args.cli, name, overrides, workdir) for name, overrides in cases.items()]
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
