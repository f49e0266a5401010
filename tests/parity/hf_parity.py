#!/usr/bin/env python3
"""Hugging Face parity (docs/huggingface.md): random-weight LlamaForCausalLM and GPT2LMHeadModel models,
built with transformers in several shapes and saved with save_pretrained, are loaded by normlab-cli
(dump-grads and eval --hf-checkpoint): logits and loss within 1e-5 relative of transformers' (float64),
every parameter's gradient within 1e-4. Then trained NormLab models go out with export --hf, come back
through from_pretrained and evaluate to NormLab's loss; and configs NormLab cannot build exit 2 by name.
Runs in the bridge's environment (scripts/bridge_venv.sh), which has torch and transformers."""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

LOGIT_TOLERANCE = 1e-5
GRAD_TOLERANCE = 1e-4
ROWS, LENGTH = 3, 12  # the batch: 3 sequences of 12 predicted positions

LLAMA = dict(vocab_size=300, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
             num_attention_heads=4, max_position_embeddings=32)
GPT2 = dict(vocab_size=300, n_embd=32, n_layer=2, n_head=4, n_positions=24)
CASES = {
    "llama-gqa-untied": (LlamaConfig, LlamaForCausalLM, dict(LLAMA, num_key_value_heads=2)),
    "llama-mqa-tied-theta": (LlamaConfig, LlamaForCausalLM,
                             dict(LLAMA, num_key_value_heads=1, tie_word_embeddings=True, rope_theta=500000.0,
                                  rms_norm_eps=1e-5)),
    "llama-bias-gelu": (LlamaConfig, LlamaForCausalLM,
                        dict(LLAMA, num_key_value_heads=4, attention_bias=True, mlp_bias=True, hidden_act="gelu")),
    "gpt2-tied": (GPT2Config, GPT2LMHeadModel, dict(GPT2)),
    "gpt2-untied-relu": (GPT2Config, GPT2LMHeadModel,
                         dict(GPT2, tie_word_embeddings=False, activation_function="relu", n_inner=48)),
}


def relative(a, b):
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


def cli(args, *arguments, expect=0):
    done = subprocess.run([args.cli, *map(str, arguments)], capture_output=True, text=True)
    if done.returncode != expect:
        sys.exit(f"FAILED: normlab-cli {' '.join(map(str, arguments))} exited {done.returncode}, "
                 f"expected {expect}:\n{done.stderr}")
    return done


def build(config_class, model_class, keys, folder, seed):
    """A model with every parameter drawn (norm gains around 1, biases non-zero), saved to `folder`."""
    torch.manual_seed(seed)
    config = config_class(**keys, attn_pdrop=0.0, embd_pdrop=0.0, resid_pdrop=0.0) \
        if config_class is GPT2Config else config_class(**keys)
    model = model_class(config).float()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            is_norm = "norm" in name or "ln_" in name
            parameter.normal_(1.0 if is_norm and name.endswith("weight") else 0.0, 0.2 if is_norm else 0.1)
    model.save_pretrained(folder)
    return model


def write_tokens(path, ids):
    path.write_text("\n".join(" ".join(str(int(t)) for t in row) for row in ids) + "\n")


def reference(model, ids):
    """transformers' logits, mean next-token loss and gradients, in float64."""
    model = model.double()
    model.zero_grad()
    logits = model(input_ids=ids[:, :-1]).logits
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
    loss.backward()
    grads = {name: p.grad.detach().clone() for name, p in model.named_parameters()}
    return logits.detach().reshape(-1, logits.shape[-1]), loss.item(), grads


def check_import(args, name, work):
    config_class, model_class, keys = CASES[name]
    folder = work / name
    model = build(config_class, model_class, keys, folder, seed=len(name))
    ids = torch.randint(0, keys["vocab_size"], (ROWS, LENGTH + 1), generator=torch.Generator().manual_seed(7))
    tokens = work / f"{name}.tokens"
    write_tokens(tokens, ids)
    logits, loss, grads = reference(model, ids)

    out = work / f"{name}-dump"
    cli(args, "dump-grads", "--hf-checkpoint", folder, "--tokens", tokens, "--out", out,
        "--set", "model.seq_len=16", "--set", "threads=1", "--set", f"device={args.device}")
    dumped = load_file(out / "grads.safetensors")
    errors = {"logits": relative(dumped["logits"].double(), logits)}
    missing = sorted(set(grads) - {k[5:] for k in dumped if k.startswith("grad.")})
    if missing:
        sys.exit(f"FAILED {name}: NormLab wrote no gradient for {missing}")
    for parameter, grad in grads.items():
        ours = dumped["grad." + parameter].double()
        if ours.shape != grad.shape:  # learned positions: NormLab keeps the first model.seq_len rows
            if parameter.endswith("wpe.weight") and grad[ours.shape[0]:].abs().max() == 0:
                grad = grad[:ours.shape[0]]
            else:
                sys.exit(f"FAILED {name}: {parameter} is {list(ours.shape)} in NormLab, {list(grad.shape)} here")
        errors[parameter] = relative(ours, grad)
    evaluated = json.loads(cli(args, "eval", "--hf-checkpoint", folder, "--tokens", tokens, "--json",
                               "--set", "threads=1").stdout)
    loss_error = abs(evaluated["loss"] - loss) / abs(loss)
    worst_grad = max((e, p) for p, e in errors.items() if p != "logits")
    print(f"{name}: loss {evaluated['loss']:.8f} vs {loss:.8f} (rel {loss_error:.1e}), logits rel "
          f"{errors['logits']:.1e}, worst gradient {worst_grad[1]} rel {worst_grad[0]:.1e} "
          f"over {len(grads)} tensors")
    if loss_error > LOGIT_TOLERANCE or errors["logits"] > LOGIT_TOLERANCE or worst_grad[0] > GRAD_TOLERANCE:
        sys.exit(f"FAILED {name}: beyond tolerance (logits/loss {LOGIT_TOLERANCE}, gradients {GRAD_TOLERANCE})")
    if evaluated["tokens"] != ROWS * LENGTH:
        sys.exit(f"FAILED {name}: eval counted {evaluated['tokens']} positions, expected {ROWS * LENGTH}")


def check_hub_names(args, work):
    """A GPT-2 file as the hub's original one: no "transformer." prefix, causal-mask buffers beside."""
    folder = work / "gpt2-tied"
    hub = work / "gpt2-hub"
    hub.mkdir()
    tensors = {k.removeprefix("transformer."): v for k, v in load_file(folder / "model.safetensors").items()}
    for block in range(GPT2["n_layer"]):
        tensors[f"h.{block}.attn.bias"] = torch.tril(torch.ones(1, 1, 24, 24))
    save_file(tensors, hub / "model.safetensors", metadata={"format": "pt"})
    (hub / "config.json").write_text((folder / "config.json").read_text())
    tokens = work / "gpt2-tied.tokens"
    same = json.loads(cli(args, "eval", "--hf-checkpoint", folder, "--tokens", tokens).stdout)
    renamed = json.loads(cli(args, "eval", "--hf-checkpoint", hub / "model.safetensors", "--hf-config",
                             hub / "config.json", "--tokens", tokens).stdout)
    if same != renamed:
        sys.exit(f"FAILED hub names: {renamed} against {same}")
    print(f"gpt2 with the hub's names and buffers: the same loss {renamed['loss']:.8f}")


def check_export(args, work, preset, model_class):
    run = work / f"run-{preset}"
    cli(args, "train", "--preset", preset, "--steps", 20, "--set", "model.layers=2", "--set", "threads=1",
        "--save-checkpoint", "--quiet", "--out", run)
    out = work / f"hf-{preset}"
    cli(args, "export", "--hf", out, "--run", run)
    ids = torch.randint(0, 256, (ROWS, LENGTH + 1), generator=torch.Generator().manual_seed(3))
    tokens = work / f"export-{preset}.tokens"
    write_tokens(tokens, ids)
    normlab = json.loads(cli(args, "eval", "--checkpoint", run / "model.safetensors", "--tokens", tokens).stdout)
    model = model_class.from_pretrained(out).double().eval()
    with torch.no_grad():
        logits = model(input_ids=ids[:, :-1]).logits
    loss = float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1)))
    error = abs(normlab["loss"] - loss) / loss
    print(f"export --hf {preset}: transformers {loss:.8f}, NormLab {normlab['loss']:.8f} (rel {error:.1e})")
    if error > LOGIT_TOLERANCE:
        sys.exit(f"FAILED export {preset}: the exported model evaluates differently")
    # A second export into the same folder keeps what is there unless --overwrite.
    before = (out / "model.safetensors").read_bytes()
    cli(args, "export", "--hf", out, "--run", run, expect=2)
    if (out / "model.safetensors").read_bytes() != before:
        sys.exit("FAILED: a refused export changed the folder")


def check_refusals(args, work):
    """Configs NormLab cannot build exit 2 naming the key; dropout only matters to training."""
    def refused(config, key, command="eval"):
        folder = work / f"refused-{key}"
        folder.mkdir(exist_ok=True)
        (folder / "config.json").write_text(json.dumps(config))
        if command == "eval":
            done = cli(args, "eval", "--hf-config", folder / "config.json", "--hf-checkpoint",
                       work / "llama-gqa-untied", "--tokens", work / "llama-gqa-untied.tokens", expect=2)
        else:
            done = cli(args, "train", "--hf-config", folder, "--steps", 1, "--out", work / "never", expect=2)
        if key not in done.stderr:
            sys.exit(f"FAILED: the refusal does not name {key}:\n{done.stderr}")
    llama = json.loads((work / "llama-gqa-untied" / "config.json").read_text())
    refused(dict(llama, rope_scaling={"rope_type": "llama3", "factor": 8.0}), "rope_scaling")
    refused(dict(llama, sliding_window=16), "sliding_window")
    refused(dict(llama, model_type="mistral"), "model_type")
    refused(dict(llama, head_dim=16), "head_dim")
    gpt2 = json.loads((work / "gpt2-tied" / "config.json").read_text())
    refused(dict(gpt2, attn_pdrop=0.1), "attn_pdrop", command="train")
    done = cli(args, "train", "--preset", "postln-no-warmup", "--steps", 2, "--save-checkpoint", "--quiet",
               "--out", work / "postln")
    done = cli(args, "export", "--hf", work / "hf-postln", "--run", work / "postln", expect=2)
    if "model.norm_placement=post" not in done.stderr or (work / "hf-postln").exists():
        sys.exit(f"FAILED: a Post-LN export must be refused by name, writing nothing:\n{done.stderr}")
    print("refused by name: rope_scaling, sliding_window, model_type, head_dim, attn_pdrop (training), "
          "a Post-LN export")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--device", default="cpu", help="where NormLab computes the imported models' gradients "
                        "(cpu, or cuda on a GPU machine: scripts/device_cuda.sh's hf step)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        for name in CASES:
            check_import(args, name, work)
        check_hub_names(args, work)
        check_export(args, work, "llama-small", LlamaForCausalLM)
        check_export(args, work, "gpt2-shape", GPT2LMHeadModel)
        check_refusals(args, work)
    print("hf_parity: passed")


if __name__ == "__main__":
    main()
