#!/usr/bin/env python3
"""Benchmark: the cost of emulated mixed precision (train.precision, docs/precision.md).
Times `normlab-cli bench` on each preset in fp32 and in every emulated format, interleaved round by round
so that a change in the machine's load reaches every format alike, and prints one table: the median
ms per step of each format and its ratio to fp32 in the same rounds (target: at most 1.30).
Usage: scripts/bench_precision.py --cli build/app/normlab-cli [--presets a,b] [--rounds 5]"""
import argparse
import json
import os
import statistics
import subprocess
import sys

FORMATS = ["fp32", "bf16", "fp16", "fp8_e4m3"]


def bench_once(cli, preset, precision, steps, threads):
    command = [cli, "bench", "--preset", preset, "--steps", str(steps), "--warmup", "3",
               "--set", f"train.precision={precision}", "--set", f"threads={threads}",
               "--set", "device=cpu"]
    result = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])["ms_per_step"]


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--presets", default="tiny,small")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    if not os.access(args.cli, os.X_OK):
        sys.exit(f"bench_precision: {args.cli} is not an executable normlab-cli; build it first")
    print(f"load before timing: {load()} ({os.cpu_count()} cores)")
    print(f"{'preset':<14}" + "".join(f"{f + ' ms':>14}" for f in FORMATS) +
          "".join(f"{f + '/fp32':>16}" for f in FORMATS[1:]))
    for preset in args.presets.split(","):
        times = {f: [] for f in FORMATS}
        for _ in range(args.rounds):
            for precision in FORMATS:
                times[precision].append(bench_once(args.cli, preset, precision, args.steps, args.threads))
        medians = {f: statistics.median(times[f]) for f in FORMATS}
        ratios = [statistics.median(e / b for e, b in zip(times[f], times["fp32"])) for f in FORMATS[1:]]
        print(f"{preset:<14}" + "".join(f"{medians[f]:>14.2f}" for f in FORMATS) +
              "".join(f"{r:>16.2f}" for r in ratios))
    print(f"load after timing: {load()}; ratios: the median over rounds of each round's ms / fp32's")


if __name__ == "__main__":
    main()
