#!/usr/bin/env python3
"""Measures norm-free inference across seeds, the way docs/science.md's table was measured: trains each
preset x seed with normlab-cli (--save-checkpoint, --jobs at a time, one thread each), runs
`probe --freeze-norms` on each checkpoint, and prints one markdown row per preset with each figure's mean
and range over the seeds: the held-out loss, the largest loss change from freezing one norm (and which),
Spearman's rank correlation over the norms of that change and the norm's CV of per-token std, the change
from freezing all at once, and with --finetune-steps the loss after freezing one by one with fine-tuning
(Heimersheim's order) against the control fine-tuned as long without freezing.

  python3 scripts/measure_freeze_norms.py --preset quickstart --preset periln --seeds 1,2,3 --finetune-steps 50
"""
import argparse
import collections
import concurrent.futures
import json
import statistics
import subprocess
import tempfile
from pathlib import Path


def measure(cli, preset, seed, finetune_steps, folder):
    run = folder / f"{preset}-{seed}"
    subprocess.run([cli, "train", "--preset", preset, "--set", f"train.seed={seed}", "--set", "threads=1",
                    "--out", str(run), "--save-checkpoint", "--quiet"], check=True, stdout=subprocess.DEVNULL)
    probe = [cli, "probe", "--freeze-norms", "--checkpoint", str(run / "model.safetensors"), "--out", str(run)]
    if finetune_steps:
        probe += ["--finetune-steps", str(finetune_steps)]
    subprocess.run(probe, check=True, stdout=subprocess.DEVNULL)
    return json.loads((run / "freeze_norms.json").read_text())


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return f"{statistics.fmean(values):+.3f} ({min(values):+.3f}..{max(values):+.3f})"


def row(preset, documents):
    worst = [max(d["norms"], key=lambda norm: norm["loss_change"]) for d in documents]
    names = collections.Counter(norm["name"] for norm in worst).most_common(1)[0][0]
    cells = [preset, f"{statistics.fmean(d['baseline_loss'] for d in documents):.3f}",
             spread([norm["loss_change"] for norm in worst]) + f" {names}",
             spread([d["loss_change_cv_rank_correlation"] for d in documents]),
             spread([d["all_at_once"]["loss_change"] for d in documents])]
    if all("finetune" in d for d in documents):
        cells += [spread([d["finetune"]["loss_change_vs_control"] for d in documents]),
                  spread([d["finetune"]["loss_change_vs_baseline"] for d in documents])]
    return "| " + " | ".join(cells) + " |"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default="build/app/normlab-cli")
    parser.add_argument("--preset", action="append", required=True)
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--finetune-steps", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    header = "| preset | held-out loss | one norm frozen (worst) | rank corr. change, CV | all at once |"
    if args.finetune_steps:
        header += f" one by one, {args.finetune_steps} steps each, vs control | vs checkpoint |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    with tempfile.TemporaryDirectory(prefix="normlab_freeze_") as scratch, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for preset in args.preset:
            futures = [pool.submit(measure, args.cli, preset, seed, args.finetune_steps, Path(scratch))
                       for seed in seeds]
            print(row(preset, [future.result() for future in futures]), flush=True)


if __name__ == "__main__":
    main()
