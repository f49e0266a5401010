#!/usr/bin/env python3
"""Measures presets across seeds, the way the README's lesson figures were measured: trains every preset x
seed with normlab-cli (--jobs at a time, one thread each), then prints a markdown table per preset: final
training and validation loss, the largest attention logit (and the step it was first above 1000), the
lowest attention entropy, and the output logits' mean log Z at the end and largest |log Z|, each as mean
and range over the seeds.

  python3 scripts/measure_presets.py --preset logit-growth --preset logit-growth-qknorm --seeds 1,2,3 \\
      --set train.lr=0.3
"""
import argparse
import concurrent.futures
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def train(cli, preset, seed, sets, out):
    command = [cli, "train", "--preset", preset, "--set", f"train.seed={seed}", "--set", "threads=1",
               "--out", str(out), "--quiet"]
    for assignment in sets:
        command += ["--set", assignment]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)  # the summary is read from the folder
    return summarise(out)


def summarise(folder):
    """One run's figures from its run folder."""
    summary = json.loads((folder / "summary.json").read_text())
    largest, lowest, first_above = 0.0, float("inf"), None
    log_z, log_z_max_abs = None, 0.0
    for line in (folder / "metrics.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record.get("log_z_mean") is not None:
            log_z = record["log_z_mean"]
            log_z_max_abs = max(log_z_max_abs, record["log_z_max_abs"] or 0.0)
        for layer in record.get("layers", []):
            logit, entropy = layer.get("attn_max_logit"), layer.get("attn_entropy")
            if logit is not None:
                largest = max(largest, logit)
                if logit > 1000 and first_above is None:
                    first_above = record["step"]
            if entropy is not None:
                lowest = min(lowest, entropy)
    return {"loss": summary["final_loss"], "val_loss": summary.get("final_val_loss"), "max_logit": largest,
            "min_entropy": lowest, "logit_1000_at": first_above, "status": summary["status"],
            "log_z": log_z, "log_z_max_abs": log_z_max_abs,
            "seconds": summary.get("wall_seconds")}


def spread(values, digits):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    mean = statistics.fmean(values)
    if len(values) == 1:
        return f"{mean:.{digits}g}"
    return f"{mean:.{digits}g} ({min(values):.{digits}g}-{max(values):.{digits}g})"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default="build/app/normlab-cli")
    parser.add_argument("--preset", action="append", required=True)
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--set", action="append", default=[], help="KEY=VALUE for every run")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    with tempfile.TemporaryDirectory(prefix="normlab_measure_") as work, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        jobs = {(p, s): pool.submit(train, args.cli, p, s, args.set, Path(work) / f"{p}-{s}")
                for p in args.preset for s in seeds}
        results = {key: job.result() for key, job in jobs.items()}
    print(f"seeds {args.seeds}; --set {' '.join(args.set) or '(none)'}; mean (range) over seeds\n")
    print("| preset | final loss | final val loss | largest attention logit | first step > 1000 "
          "| lowest attention entropy | final mean log Z | largest abs log Z | seconds per run |")
    print("|---|---|---|---|---|---|---|---|---|")
    for preset in args.preset:
        runs = [results[(preset, s)] for s in seeds]
        statuses = sorted({r["status"] for r in runs})
        name = preset if statuses == ["completed"] else f"{preset} ({', '.join(statuses)})"
        firsts = [r["logit_1000_at"] for r in runs]
        first = "never" if all(f is None for f in firsts) else ", ".join("never" if f is None else str(f)
                                                                         for f in firsts)
        print(f"| {name} | {spread([r['loss'] for r in runs], 3)} | {spread([r['val_loss'] for r in runs], 3)} "
              f"| {spread([r['max_logit'] for r in runs], 3)} | {first} "
              f"| {spread([r['min_entropy'] for r in runs], 2)} | {spread([r['log_z'] for r in runs], 3)} "
              f"| {spread([r['log_z_max_abs'] for r in runs], 3)} | {spread([r['seconds'] for r in runs], 3)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
