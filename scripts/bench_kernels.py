#!/usr/bin/env python3
"""Benchmark: the CPU backend's GEMM kernels (NORMLAB_GEMM=own | library, docs/performance.md) against the
CPU's FMA peak, in a native build and optionally a portable one (the .deb's flags), side by side.
Each round runs `normlab-cli bench --peak` (whole steps) and `bench --gemm --peak` (the linear layers'
products) for every build and kernel in turn, so a change in the machine's load reaches all alike; the
table gives medians over rounds and each row's step rate over the native library row's in the same rounds.
Usage: scripts/bench_kernels.py --cli build/app/normlab-cli [--portable-cli DIR/app/normlab-cli]
                                [--shapes small,medium] [--rounds 3] [--steps 10]"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "peer"))
from run_comparison import normlab_args  # noqa: E402  (the comparison's shapes and settings)

KERNELS = ["own", "library"]


def bench_once(cli, shape, kernel, steps, gemm):
    command = [cli, "bench", *normlab_args(shape, 1), "--steps", str(steps), "--warmup", "2", "--peak"]
    if gemm:
        command.append("--gemm")
    env = dict(os.environ, NORMLAB_GEMM=kernel, OMP_WAIT_POLICY="PASSIVE")
    result = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    return json.loads(result.stdout.strip().splitlines()[-1])


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True, help="a native build's normlab-cli")
    parser.add_argument("--portable-cli", help="a portable build's (cmake -DNORMLAB_NATIVE=OFF)")
    parser.add_argument("--shapes", default="small,medium")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    builds = {"native": args.cli}
    if args.portable_cli:
        builds["portable"] = args.portable_cli
    for path in builds.values():
        if not os.access(path, os.X_OK):
            sys.exit(f"bench_kernels: {path} is not an executable normlab-cli; build it first")
    print(f"load before timing: {load()} ({os.cpu_count()} cores)")
    print("| shape | build | kernel | steps/s | step GFLOP/s | share of peak | GEMM GFLOP/s | GEMM share "
          "| steps/s over native library |")
    print("|---|---|---|---|---|---|---|---|---|")
    for shape in args.shapes.split(","):
        rows = {(b, k): {"steps": [], "gflops": [], "share": [], "gemm": [], "gemm_share": []}
                for b in builds for k in KERNELS}
        for _ in range(args.rounds):
            for build, cli in builds.items():
                for kernel in KERNELS:
                    step = bench_once(cli, shape, kernel, args.steps, gemm=False)
                    gemm = bench_once(cli, shape, kernel, args.steps, gemm=True)
                    row = rows[(build, kernel)]
                    row["steps"].append(step["steps_per_s"])
                    row["gflops"].append(step["gflops"])
                    row["share"].append(step["share_of_peak"])
                    row["gemm"].append(gemm["gemm_gflops"])
                    row["gemm_share"].append(gemm["share_of_peak"])
        baseline = rows[("native", "library")]["steps"]
        for (build, kernel), row in rows.items():
            ratio = statistics.median(s / b for s, b in zip(row["steps"], baseline))
            median = {key: statistics.median(values) for key, values in row.items()}
            print(f"| {shape} | {build} | {kernel} | {median['steps']:.2f} | {median['gflops']:.0f} "
                  f"| {median['share']:.0%} | {median['gemm']:.0f} | {median['gemm_share']:.0%} | {ratio:.2f} |")
    print(f"load after timing: {load()}; peak: every thread's independent FMA chains, measured in each run")


if __name__ == "__main__":
    main()
