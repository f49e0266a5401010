#!/usr/bin/env python3
"""Measures, over seeds, what fp16 does to the lessons' 6-block models (docs/precision.md#measured):
for Post-LN with warmup, Pre-LN, Peri-LN, ReZero (no norms) and the residual-stream schemes (LayerNorm
Scaling, DenseFormer, B2T, ResiDual) at Adam lr 3e-3, trained in fp32 and in emulated fp16 with a
dynamic loss scale, and Pre-LN in fp16 without one: the residual stream's least headroom (min over steps
and blocks of stream_headroom), whether any activation overflowed (max act_overflow), the largest share
of gradients that underflowed (max grad_underflow), the skipped steps, and fp16's paired change of the
final validation loss. Every number is `normlab-cli compare`'s mean and 95% interval over the seeds.
Usage: scripts/measure_precision.py --cli build/app/normlab-cli --out DIR [--seeds 3] [--steps 600]"""
import argparse
import json
import os
import subprocess
import sys

# (row, preset, the sets that make the model from it; its runs' folder name)
MODELS = [("Post-LN + warmup", "postln-warmup", [], "postln-warmup"),
          ("Pre-LN", "preln-no-warmup", [], "preln-no-warmup"),
          ("Peri-LN", "periln", [], "periln"),
          ("ReZero", "preln-no-warmup", ["--set", "model.norm_placement=none", "--set", "model.residual=rezero"],
           "rezero-6"),
          # issue 34's residual-stream schemes on the same model
          ("LayerNorm Scaling", "preln-no-warmup", ["--set", "model.residual=lns"], "lns-6"),
          ("DenseFormer", "preln-no-warmup", ["--set", "model.residual=denseformer"], "denseformer-6"),
          ("B2T + warmup", "postln-warmup", ["--set", "model.residual=b2t"], "b2t-6"),
          ("ResiDual + warmup", "postln-warmup", ["--set", "model.residual=resi_dual"], "resi-dual-6")]
FP16 = ["--set", "train.precision=fp16", "--set", "train.loss_scale=dynamic"]
FP16_UNSCALED = ["--set", "train.precision=fp16"]


def train(cli, out, preset, extra, seeds, steps):
    if os.path.exists(os.path.join(out, "group.json")):
        return out  # kept from an earlier measurement: `train --seeds` resumes nothing, so reuse it whole
    subprocess.run([cli, "train", "--preset", preset, "--steps", str(steps), "--seeds", str(seeds),
                    "--out", out, "--quiet", *extra], check=True, stdout=subprocess.DEVNULL)
    return out


def compare(cli, metric, a, b=None):
    command = [cli, "compare", "--run", a, "--metric", metric, "--json"] + (["--run", b] if b else [])
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def interval(estimate):
    if estimate.get("mean") is None:
        return "n/a"
    low_high = estimate.get("ci")
    text = f"{estimate['mean']:.4g}"
    return text + (f" [{low_high[0]:.4g}, {low_high[1]:.4g}]" if low_high else " (one seed)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=600)
    args = parser.parse_args()
    if not os.access(args.cli, os.X_OK):
        sys.exit(f"measure_precision: {args.cli} is not an executable normlab-cli; build it first")
    os.makedirs(args.out, exist_ok=True)
    results = {}
    print(f"{args.seeds} seeds, {args.steps} steps; mean [95% CI] over seeds")
    print(f"{'model':<18}{'min headroom':>26}{'max act overflow':>26}{'max grad underflow':>30}"
          f"{'skipped steps':>22}{'fp16 - fp32 val loss':>32}")
    rows = [(name, preset, sets, folder, FP16) for name, preset, sets, folder in MODELS]
    rows.append(("Pre-LN, no scale", "preln-no-warmup", [], "preln-no-warmup", FP16_UNSCALED))
    for name, preset, sets, folder, extra in rows:
        tag = folder + ("-fp16" if extra is FP16 else "-fp16-unscaled")
        fp16 = train(args.cli, os.path.join(args.out, tag), preset, sets + extra, args.seeds, args.steps)
        fp32 = train(args.cli, os.path.join(args.out, folder + "-fp32"), preset, sets, args.seeds, args.steps)
        row = {
            "min_stream_headroom": compare(args.cli, "min:stream_headroom", fp16)["a"],
            "max_act_overflow": compare(args.cli, "max:act_overflow", fp16)["a"],
            "max_grad_underflow": compare(args.cli, "max:grad_underflow", fp16)["a"],
            "val_loss_change": compare(args.cli, "final_val_loss", fp32, fp16)["difference"],
        }
        if extra is FP16:
            row["skipped_steps"] = compare(args.cli, f"skipped_steps@{args.steps}", fp16)["a"]
        results[name] = row
        skipped = interval(row["skipped_steps"]) if "skipped_steps" in row else "no scale"
        print(f"{name:<18}{interval(row['min_stream_headroom']):>26}{interval(row['max_act_overflow']):>26}"
              f"{interval(row['max_grad_underflow']):>30}{skipped:>22}{interval(row['val_loss_change']):>32}")
    with open(os.path.join(args.out, "precision.json"), "w") as f:
        json.dump(results, f, indent=2)
    print(f"written: {os.path.join(args.out, 'precision.json')}")


if __name__ == "__main__":
    main()
