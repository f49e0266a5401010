#!/usr/bin/env python3
"""Measures how far the presets' figures move across thread counts and instruction sets: trains every
preset with each normlab-cli build given (--cli LABEL=PATH, e.g. builds with -march=native, x86-64-v3 and
no -march) at each thread count, from the same seed, and prints a markdown table per preset: the final
training and held-out loss of the first build at 2 threads (the figure a reader compares with), their
range over every build and thread count, and the decimals to which every run agrees.

  python3 scripts/measure_spread.py --cli native=build/app/normlab-cli \\
      --cli avx2=build-avx2/app/normlab-cli --cli sse2=build-sse2/app/normlab-cli --threads 1,2,4

Each run is deterministic for its build and thread count
(docs/science.md#reproducing-the-figures-on-another-machine); a different count or vector width sums in another order, which is what this measures.
"""
import argparse
import concurrent.futures
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

# The presets of docs/science.md's measured table.
DEFAULT_PRESETS = ["postln-no-warmup", "postln-warmup", "preln-no-warmup", "postln-noam", "postln-radam",
                   "periln", "deep-postln", "deep-deepnorm", "deep-rezero", "theory-postln", "theory-preln",
                   "quickstart"]


def train(cli, preset, threads, out):
    command = [cli, "train", "--preset", preset, "--set", f"threads={threads}", "--out", str(out), "--quiet"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    summary = json.loads((out / "summary.json").read_text())
    return summary["final_loss"], summary.get("final_val_loss"), summary["status"]


def agreeing_decimals(values):
    """The most decimals d at which every value rounds to the same number (0 when they differ by >= 1)."""
    for decimals in range(6, -1, -1):
        if len({round(v, decimals) for v in values}) == 1:
            return decimals
    return 0


def describe(reference, values):
    low, high = min(values), max(values)
    return f"{reference:.3f} | {low:.3f}-{high:.3f} ({high - low:.3f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", action="append", required=True, help="LABEL=PATH of a normlab-cli build")
    parser.add_argument("--threads", default="1,2,4")
    parser.add_argument("--preset", action="append", help="default: the presets of docs/science.md's table")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time")
    args = parser.parse_args()
    builds = dict(item.split("=", 1) for item in args.cli)
    threads = [int(t) for t in args.threads.split(",")]
    presets = args.preset or DEFAULT_PRESETS
    reference = (next(iter(builds)), 2 if 2 in threads else threads[0])
    with tempfile.TemporaryDirectory(prefix="normlab_spread_") as work, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        jobs = {(p, b, t): pool.submit(train, path, p, t, Path(work) / f"{p}-{b}-{t}")
                for p in presets for b, path in builds.items() for t in threads}
        results = {key: job.result() for key, job in jobs.items()}
    print(f"builds {', '.join(builds)}; threads {args.threads}; reference: {reference[0]} at "
          f"{reference[1]} threads; range over all {len(builds) * len(threads)} runs\n")
    print("| preset | final loss | range (width) | agrees to | val loss | range (width) | agrees to |")
    print("|---|---|---|---|---|---|---|")
    for preset in presets:
        runs = [results[(preset, b, t)] for b in builds for t in threads]
        ref = results[(preset, *reference)]
        losses = [r[0] for r in runs]
        vals = [r[1] for r in runs if r[1] is not None and math.isfinite(r[1])]
        statuses = sorted({r[2] for r in runs})
        name = preset if statuses == ["completed"] else f"{preset} ({', '.join(statuses)})"
        val_cells = (f"{describe(ref[1], vals)} | {agreeing_decimals(vals)} decimals" if vals and ref[1] is not None
                     else "- | - | -")
        print(f"| {name} | {describe(ref[0], losses)} | {agreeing_decimals(losses)} decimals | {val_cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
