#!/usr/bin/env python3
# Summarises an Nsight Compute CSV (ncu --csv --page raw --metrics gpu__time_duration.sum) of NormLab's
# training steps into where the GPU time goes: each kernel family's total time, share and launch count,
# largest first, as a Markdown table. Used by scripts/device_cuda.sh's profile step (docs/cuda.md).
# Usage: cuda_kernel_profile.py NCU.csv [--steps N]  (N: training steps the CSV covers, for ms per step)
import argparse
import csv
import re
import sys
from collections import defaultdict

UNIT_SECONDS = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0}


def family(name):
    """A kernel's family: cuBLAS's GEMM kernels are two families, those on 16-bit tensor cores (native
    bf16/fp16 products) and the rest; every other kernel is its own name without template arguments
    and parameter lists."""
    if re.search(r"gemm|sgemm|cutlass|xmma|gemv", name, re.IGNORECASE):
        if re.search(r"bf16|f16|h16|hmma", name, re.IGNORECASE):
            return "cuBLAS GEMM, 16-bit tensor cores"
        return "cuBLAS GEMM/GEMV"
    for noise in ("(anonymous namespace)::", "<unnamed>::", "normlab::", "void "):
        name = name.replace(noise, "")
    return re.sub(r"[(<].*", "", name).strip()


def read_kernels(path):
    with open(path, newline="") as handle:
        lines = [line for line in handle if line.startswith('"')]  # ncu's own messages are not quoted
    rows = list(csv.reader(lines))
    if not rows:
        sys.exit(f"no ncu CSV in {path}")
    header = rows[0]
    name_column = next(i for i, h in enumerate(header) if h in ("Kernel Name", "Function Name"))
    time_column = header.index("gpu__time_duration.sum")
    scale = 1e-9
    kernels = []
    for row in rows[1:]:
        value = row[time_column].replace(",", "")
        if row[time_column] in UNIT_SECONDS:
            scale = UNIT_SECONDS[row[time_column]]
            continue
        try:
            kernels.append((row[name_column], float(value) * scale))
        except ValueError:
            continue
    return kernels


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("csv")
    parser.add_argument("--steps", type=int, default=1)
    args = parser.parse_args()
    kernels = read_kernels(args.csv)
    if not kernels:
        sys.exit(f"no kernel times in {args.csv}")
    totals, counts = defaultdict(float), defaultdict(int)
    for name, seconds in kernels:
        totals[family(name)] += seconds
        counts[family(name)] += 1
    whole = sum(totals.values())
    print(f"{len(kernels)} kernels, {1e3 * whole / args.steps:.1f} ms of GPU time per step "
          f"(kernel durations under ncu, summed; launch gaps excluded)\n")
    print("| kernel family | ms per step | share | launches per step |")
    print("|---|---|---|---|")
    for name, seconds in sorted(totals.items(), key=lambda item: -item[1]):
        print(f"| {name} | {1e3 * seconds / args.steps:.2f} | {seconds / whole:.1%} | "
              f"{counts[name] / args.steps:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
