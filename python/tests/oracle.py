# Direct computation of what the bridge should log, in float64, from each tiny model's weights and the
# inputs of its blocks: block outputs and attention sums by hand (checked against the model's own
# outputs), queries, keys and attention logits (rotary applied for Llama), norms' per-token 1/std, the
# output logits, gradient norms by name and Adam's state read from the optimizer.
import torch
import torch.nn.functional as F

from models import HEADS, WIDTH

# Written out here, independently of normlab.layout's table: parameter names per role, per model kind.
ROLE_NAMES = {
    "gpt2": {"w_qkv": ["attn.c_attn.weight"], "w_o": ["attn.c_proj.weight"], "w_1": ["mlp.c_fc.weight"],
             "w_2": ["mlp.c_proj.weight"], "norm1": ["ln_1.weight"], "norm2": ["ln_2.weight"]},
    "llama": {"w_qkv": ["self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight"],
              "w_o": ["self_attn.o_proj.weight"], "w_1": ["mlp.gate_proj.weight", "mlp.up_proj.weight"],
              "w_2": ["mlp.down_proj.weight"], "norm1": ["input_layernorm.weight"],
              "norm2": ["post_attention_layernorm.weight"]},
    "plain": {"w_qkv": ["qkv.weight"], "w_o": ["proj.weight"], "w_1": ["up.weight"], "w_2": ["down.weight"],
              "norm1": ["pre_attn.weight"], "norm2": ["pre_ffn.weight"]},
}
ROLE_NAMES["nanogpt"] = ROLE_NAMES["gpt2"]
ROLE_NAMES["titan"] = {"w_qkv": ["attention.wq.weight", "attention.wk.weight", "attention.wv.weight"],
                       "w_o": ["attention.wo.weight"], "w_1": ["feed_forward.w1.weight", "feed_forward.w3.weight"],
                       "w_2": ["feed_forward.w2.weight"], "norm1": ["attention_norm.weight"],
                       "norm2": ["ffn_norm.weight"]}
BLOCK_PREFIX = {"gpt2": "transformer.h.{}.", "nanogpt": "transformer.h.{}.", "llama": "model.layers.{}.",
                "plain": "stack.{}.", "titan": "layers.{}."}


def blocks_of(kind, model):
    return {"gpt2": lambda: model.transformer.h, "nanogpt": lambda: model.transformer.h,
            "llama": lambda: model.model.layers, "plain": lambda: model.stack,
            "titan": lambda: list(model.layers.values())}[kind]()


def _heads(x, heads):
    b, t, _ = x.shape
    return x.view(b, t, heads, -1).transpose(1, 2)


def _qkv(kind, model, block, a_in):
    """Queries, keys, values [B, H, T, d] as the block's attention sees them."""
    if kind in ("gpt2", "nanogpt"):
        q, k, v = block.attn.c_attn(a_in).split(WIDTH, dim=2)
        return _heads(q, HEADS), _heads(k, HEADS), _heads(v, HEADS)
    if kind == "plain":
        q, k, v = block.qkv(a_in).chunk(3, -1)
        return _heads(q, HEADS), _heads(k, HEADS), _heads(v, HEADS)
    if kind == "titan":
        return tuple(_heads(w(a_in), HEADS) for w in (block.attention.wq, block.attention.wk, block.attention.wv))
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    attn = block.self_attn
    kv_heads = model.config.num_key_value_heads
    q, k, v = _heads(attn.q_proj(a_in), HEADS), _heads(attn.k_proj(a_in), kv_heads), _heads(attn.v_proj(a_in), kv_heads)
    positions = torch.arange(a_in.shape[1], device=a_in.device)[None]
    cos, sin = model.model.rotary_emb(a_in, positions)
    q, k = apply_rotary_pos_emb(q, k, cos, sin)
    return q, k.repeat_interleave(HEADS // kv_heads, 1), v.repeat_interleave(HEADS // kv_heads, 1)


def _parts(kind, block):
    """(first norm, output projection, second norm, feed-forward) of a block."""
    if kind == "gpt2":
        return block.ln_1, block.attn.c_proj, block.ln_2, block.mlp
    if kind == "nanogpt":
        return block.ln_1, block.attn.c_proj, block.ln_2, lambda x: block.mlp.c_proj(F.gelu(block.mlp.c_fc(x)))
    if kind == "plain":
        return block.pre_attn, block.proj, block.pre_ffn, lambda x: block.down(F.relu(block.up(x)))
    if kind == "titan":
        return block.attention_norm, block.attention.wo, block.ffn_norm, block.feed_forward
    return block.input_layernorm, block.self_attn.o_proj, block.post_attention_layernorm, block.mlp


def block_by_hand(kind, model, block, h):
    """(attention residual sum, block output, scaled logits of sequence 0 with -inf where masked, the
    queries and keys of the whole batch)."""
    norm1, out_proj, norm2, ffn = _parts(kind, block)
    q, k, v = _qkv(kind, model, block, norm1(h))
    length = h.shape[1]
    logits = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    causal = torch.ones(length, length, dtype=torch.bool, device=h.device).tril()
    logits = logits.masked_fill(~causal, float("-inf"))
    y = (logits.softmax(-1) @ v).transpose(1, 2).reshape(h.shape)
    attn_sum = h + out_proj(y)
    return attn_sum, attn_sum + ffn(norm2(attn_sum)), logits[0], q, k


def final_norm_of(kind, model):
    """The norm between the last block and the output head (none in the plain model)."""
    return {"gpt2": lambda: model.transformer.ln_f, "nanogpt": lambda: model.transformer.ln_f,
            "llama": lambda: model.model.norm, "titan": lambda: model.norm, "plain": lambda: None}[kind]()


def norm_scale(norm, x):
    """(mean, coefficient of variation) over tokens of 1/sqrt(Var + eps), in float64: LayerNorm's variance
    about the mean, RMSNorm's mean square (nn.RMSNorm's eps=None is float32's machine epsilon)."""
    x = x.double()
    eps = getattr(norm, "eps", getattr(norm, "variance_epsilon", None))
    eps = torch.finfo(torch.float32).eps if eps is None else eps
    spread = x.var(-1, unbiased=False) if isinstance(norm, torch.nn.LayerNorm) else x.square().mean(-1)
    scale = 1.0 / torch.sqrt(spread + eps)
    return float(scale.mean()), float(scale.std(unbiased=False) / scale.mean())


def rms(x):
    return float(x.double().square().mean().sqrt())


def output_logits(kind, output):
    """The logits in what each model kind returns (Hugging Face: .logits; nanoGPT: (logits, loss))."""
    return {"gpt2": lambda: output.logits, "llama": lambda: output.logits, "nanogpt": lambda: output[0],
            "plain": lambda: output, "titan": lambda: output}[kind]()


def expected_logits(kind, output):
    """The run-level output-logit fields over every position of a forward's logits."""
    x = output_logits(kind, output).detach().double()
    log_z = torch.logsumexp(x, -1)
    return {"log_z_mean": float(log_z.mean()), "log_z_max_abs": float(log_z.abs().max()),
            "logit_mean": float(x.mean()), "logit_max": float(x.max())}


class BlockInputs:
    """Captures what enters and leaves each block during one forward (the model's own values), and with
    `root`, what the model returns."""

    def __init__(self, blocks, root=None):
        self.inputs, self.outputs = {}, {}
        self.handles = []
        self.model_output = None
        if root is not None:
            self.handles.append(root.register_forward_hook(
                lambda m, args, out: setattr(self, "model_output", out)))
        for i, block in enumerate(blocks):
            self.handles.append(block.register_forward_pre_hook(
                lambda m, args, kwargs, i=i: self.inputs.__setitem__(i, (args[0] if args else kwargs["hidden_states"]).detach()),
                with_kwargs=True))
            self.handles.append(block.register_forward_hook(
                lambda m, args, out, i=i: self.outputs.__setitem__(i, (out[0] if isinstance(out, tuple) else out).detach())))

    def remove(self):
        for handle in self.handles:
            handle.remove()


def expected_forward(kind, model, captured):
    """Per block, from the weights the forward used: resid, resid_attn, attention entropy, largest logit
    (per head too), q and k RMS, and the two norms' per-token scales."""
    expected = []
    blocks = blocks_of(kind, model)
    for i, block in enumerate(blocks):
        with torch.no_grad():
            attn_sum, out, logits, q, k = block_by_hand(kind, model, block, captured.inputs[i])
        torch.testing.assert_close(out, captured.outputs[i], rtol=1e-4, atol=1e-5)  # the oracle is right
        p = logits.softmax(-1)
        entropy = -(p * torch.where(p > 0, p.log(), torch.zeros_like(p))).sum(-1)
        norm1, _, norm2, _ = _parts(kind, block)
        values = {"resid": float(out.double().square().mean()),
                  "resid_attn": float(attn_sum.double().square().mean()),
                  "attn_entropy": float(entropy.mean()),
                  "attn_max_logit": float(logits[torch.isfinite(logits)].max()),
                  "attn_head_max_logit": [float(head[torch.isfinite(head)].max()) for head in logits],
                  "q_rms": rms(q), "k_rms": rms(k)}
        for name, norm, x in (("norm1", norm1, captured.inputs[i]), ("norm2", norm2, attn_sum)):
            values[f"{name}_scale_mean"], values[f"{name}_scale_cv"] = norm_scale(norm, x)
        expected.append(values)
    return expected


def expected_final_norm(kind, model, captured):
    """{final_norm_scale_mean, final_norm_scale_cv} of the final norm's input, the last block's output."""
    norm = final_norm_of(kind, model)
    if norm is None:
        return {}
    mean, cv = norm_scale(norm, captured.outputs[len(captured.outputs) - 1])
    return {"final_norm_scale_mean": mean, "final_norm_scale_cv": cv}


def expected_adam(kind, model, optimizer):
    """Per block, after optimizer.step(): sqrt(mean v) and the fraction of coordinates with sqrt(v) below
    the group's eps, from the optimizer's exp_avg_sq (float64)."""
    names = {p: n for n, p in model.named_parameters()}
    out = []
    for i in range(len(blocks_of(kind, model))):
        prefix = BLOCK_PREFIX[kind].format(i)
        moments = [(optimizer.state[p]["exp_avg_sq"].double().flatten(), group["eps"])
                   for group in optimizer.param_groups for p in group["params"] if names[p].startswith(prefix)]
        v = torch.cat([m for m, _ in moments])
        below = sum(int((m.sqrt() < eps).sum()) for m, eps in moments)
        out.append({"adam_grad_rms": float(v.mean().sqrt()), "adam_eps_fraction": below / v.numel()})
    return out


def expected_step(kind, model, forward, grads_before_step, params_before, params_after, optimizer):
    """Per block, adding to expected_forward's values: gradient norms per role, the update ratio and RMS,
    and Adam's state."""
    for i, (values, adam) in enumerate(zip(forward, expected_adam(kind, model, optimizer))):
        prefix = BLOCK_PREFIX[kind].format(i)
        values["grad"] = {role: float(torch.sqrt(sum(grads_before_step[prefix + n].double().square().sum()
                                                     for n in names)))
                          for role, names in ROLE_NAMES[kind].items()}
        names = [n for n in params_before if n.startswith(prefix)]
        update = sum((params_after[n] - params_before[n]).double().square().sum() for n in names)
        param = sum(params_after[n].double().square().sum() for n in names)
        values["update_ratio"] = float(torch.sqrt(update / param))
        values["update_rms"] = float(torch.sqrt(update / sum(params_after[n].numel() for n in names)))
        values.update(adam)
    return forward
