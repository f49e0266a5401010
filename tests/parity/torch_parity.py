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

import numpy as np
import torch
import torch.nn.functional as F

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
    "admin": ["model.norm_placement=post", "model.residual=admin", "model.admin_init=profiled"],
    "rmsnorm": ["model.norm_placement=pre", "model.norm_type=rmsnorm"],
    "dyt": ["model.norm_placement=pre", "model.norm_type=dyt"],
    "peri-rmsnorm-gelu": ["model.norm_placement=peri", "model.norm_type=rmsnorm", "model.activation=gelu"],
    "theory-post": ["model.theory_mode=true", "model.norm_placement=post"],
    "copy-task-sgd": ["data.task=copy", "train.optimizer=sgd", "train.lr=0.1"],
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


def norm(params, prefix, x, norm_type, eps):
    weight = params[prefix + ".weight"]
    if norm_type == "layernorm":
        return F.layer_norm(x, (x.shape[-1],), weight, params[prefix + ".bias"], eps)
    if norm_type == "rmsnorm":
        return weight * x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps)
    return weight * torch.tanh(params[prefix + ".alpha"] * x) + params[prefix + ".bias"]


def attention(params, prefix, u, heads, theory):
    batch, seq, d = u.shape
    head_dim = d // heads
    qkv = u @ params[prefix + "attn.qkv.weight"].T + params[prefix + "attn.qkv.bias"]
    q, k, v = (t.reshape(batch, seq, heads, head_dim).transpose(1, 2) for t in qkv.split(d, dim=-1))
    scores = q @ k.transpose(-1, -2) / math.sqrt(head_dim)
    mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
    probs = scores.masked_fill(mask, float("-inf")).softmax(-1)
    y = (probs @ v).transpose(1, 2).reshape(batch, seq, d)
    if theory:
        return y
    return y @ params[prefix + "attn.out.weight"].T + params[prefix + "attn.out.bias"]


def feed_forward(params, prefix, u, activation):
    hidden = u @ params[prefix + "ffn.fc1.weight"].T + params[prefix + "ffn.fc1.bias"]
    hidden = F.relu(hidden) if activation == "relu" else F.gelu(hidden)
    return hidden @ params[prefix + "ffn.fc2.weight"].T + params[prefix + "ffn.fc2.bias"]


def model_loss(params, config, inputs, targets):
    """The NormLab model of design.md / theory.md, written independently in PyTorch."""
    m = config["model"]
    theory = m["theory_mode"]
    layers, placement, norm_type, residual = m["layers"], m["norm_placement"], m["norm_type"], m["residual"]
    heads = 1 if theory else m["heads"]
    activation = "relu" if theory else m["activation"]
    eps = m["norm_eps"]
    deepnorm_alpha = m["deepnorm_alpha"] or (2.0 * layers) ** 0.25
    seq = inputs.shape[1]
    x = params["wte.weight"][inputs] + params["wpe.weight"][:seq]
    for i in range(layers):
        prefix = f"blocks.{i}."
        for kind, norm_name in enumerate(("norm1", "norm2")):
            u = norm(params, prefix + norm_name, x, norm_type, eps) if placement in ("pre", "peri") else x
            f = attention(params, prefix, u, heads, theory) if kind == 0 else feed_forward(params, prefix, u, activation)
            if placement == "peri":
                f = norm(params, prefix + norm_name + "_out", f, norm_type, eps)
            if residual == "rezero":
                f = params[prefix + "rezero_alpha"] * f
            shortcut = 1.0
            if residual == "deepnorm":
                shortcut = deepnorm_alpha
            elif residual == "admin":
                shortcut = params[prefix + "admin_omega"][kind]
            s = shortcut * x + f
            x = norm(params, prefix + norm_name, s, norm_type, eps) if placement == "post" else s
    if placement in ("pre", "peri"):
        x = norm(params, "final_norm", x, norm_type, eps)
    logits = x @ params["head.weight"].T
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1)


def relative_error(ours, reference):
    scale = max(np.abs(reference).max(), 1e-12)
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
    params = {k: torch.tensor(v, requires_grad=True) for k, v in checkpoint.items() if not k.startswith("optimizer.")}
    inputs = torch.tensor(dumped["batch.inputs"], dtype=torch.long)
    targets = torch.tensor(dumped["batch.targets"], dtype=torch.long)
    loss = model_loss(params, config, inputs, targets)
    loss.backward()
    failures = []
    ours_loss = float(dump_meta["loss"])
    loss_error = abs(ours_loss - loss.item()) / abs(loss.item())
    if loss_error > TOLERANCE:
        failures.append(f"loss {ours_loss} vs torch {loss.item()} (relative {loss_error:.2e})")
    worst = ("", 0.0)
    for tensor_name, param in params.items():
        grad_name = "grad." + tensor_name
        if grad_name not in dumped:
            failures.append(f"no gradient dumped for {tensor_name}")
            continue
        error = relative_error(dumped[grad_name], param.grad.numpy())
        worst = max(worst, (tensor_name, error), key=lambda item: item[1])
        if error > TOLERANCE:
            failures.append(f"{tensor_name}: relative error {error:.2e}")
    extra = {k[5:] for k in dumped if k.startswith("grad.")} - set(params)
    if extra:
        failures.append(f"gradients of tensors missing from the checkpoint: {sorted(extra)}")
    print(f"{name:18s} loss {ours_loss:.6f} (torch {loss.item():.6f}, rel {loss_error:.1e}); "
          f"{len(params)} gradients, worst {worst[0]} {worst[1]:.1e}: {'FAIL' if failures else 'ok'}")
    for failure in failures:
        print("    " + failure)
    return not failures


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cli", required=True, help="path to normlab-cli")
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(prefix="normlab_parity_") as workdir:
        results = [check_case(args.cli, name, overrides, workdir) for name, overrides in CASES.items()]
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
