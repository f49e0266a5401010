#!/usr/bin/env python3
"""NormLab's rounding to bf16, fp16 and fp8 e4m3 (engine/core/number_formats.h) against PyTorch's
`.to(torch.bfloat16 / float16 / float8_e4m3fn)`, bit for bit, on a million float32 values per format:
random bit patterns (every exponent, subnormals, infinities, NaNs), each format's ties (the midpoints of
consecutive representable values, both signs), its neighbours a float32 ulp to either side, and the
edges (largest finite, overflow thresholds, smallest subnormal; fp8 e4m3 saturates at 448 where the
others overflow to infinity). NaN must stay NaN; every other result
must have the same bits, signed zeros included. Needs torch >= 2.1 (float8); run in the bridge's
environment by precision_parity.sh."""
import argparse
import subprocess
import sys

import torch

FORMATS = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp8_e4m3": torch.float8_e4m3fn}


def representable(dtype):
    """Every finite value of a narrow format as float32, sorted (non-negative), from all its bit patterns."""
    if dtype == torch.float8_e4m3fn:
        raw = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    else:
        raw = torch.arange(-(2 ** 15), 2 ** 15, dtype=torch.int32).to(torch.int16)
    values = raw.view(dtype).float()
    values = values[torch.isfinite(values) & (values >= 0)]
    return torch.unique(values)


def inputs(dtype, count, generator):
    grid = representable(dtype).double()
    ties = ((grid[1:] + grid[:-1]) / 2).float()  # exactly representable in float32 for these formats
    near = torch.cat([torch.nextafter(ties, torch.tensor(float("inf"))),
                      torch.nextafter(ties, torch.tensor(float("-inf")))])
    edges = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 448.0, 464.0, 479.99997, 480.0,
                          65504.0, 65519.996, 65520.0, 3.3895314e38, 3.4028235e38, 1.1754944e-38,
                          1.4e-45, 2 ** -24, 2 ** -25, 2 ** -9, 2 ** -10])
    special = torch.cat([ties, -ties, near, -near, edges, grid.float(), -grid.float()])
    random_bits = torch.randint(-(2 ** 31), 2 ** 31, (max(count - special.numel(), 0),), dtype=torch.int64,
                                generator=generator).to(torch.int32).view(torch.float32)
    return torch.cat([special, random_bits])


def compare(cli, name, dtype, count, generator):
    values = inputs(dtype, count, generator)
    expected = values.to(dtype).float()
    done = subprocess.run([cli, name], input=values.numpy().tobytes(), capture_output=True, check=True)
    got = torch.frombuffer(bytearray(done.stdout), dtype=torch.float32)
    assert got.numel() == values.numel(), (got.numel(), values.numel())
    both_nan = torch.isnan(got) & torch.isnan(expected)
    same_bits = got.view(torch.int32) == expected.view(torch.int32)
    wrong = ~(both_nan | same_bits)
    print(f"{name}: {values.numel()} values ({values.numel() - int(torch.isfinite(values).sum())} not finite, "
          f"{int(((values.abs() < 1.1754944e-38) & (values != 0)).sum())} float32 subnormals): "
          f"{int(wrong.sum())} differ")
    for index in torch.nonzero(wrong).flatten()[:10].tolist():
        print(f"  {values[index].item()!r} ({values.view(torch.int32)[index].item():#010x}): NormLab "
              f"{got[index].item()!r}, torch {expected[index].item()!r}")
    return int(wrong.sum())


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--round", required=True, help="the normlab_round_formats executable")
    parser.add_argument("--count", type=int, default=1_000_000)
    args = parser.parse_args()
    generator = torch.Generator().manual_seed(20261126)
    wrong = sum(compare(args.round, name, dtype, args.count, generator) for name, dtype in FORMATS.items())
    print(f"torch {torch.__version__}: " + ("every value agrees" if wrong == 0 else f"{wrong} values differ"))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
