#!/usr/bin/env python3
# The PyTorch peer of `normlab-cli bench --gemm`: PyTorch's own fp32 matrix products (MKL on the PyPI
# build) at the model's linear-layer sizes, the forward, dx and dW product of every layer, weighted by how
# often the model has it; the median round, per asked thread count, as one JSON line {"gemm_gflops", ...}.
# It bounds what any implementation built on these products can reach (tests/peer/run_comparison.py).
import argparse
import json
import statistics
import sys
import time

import torch

from shapes import SHAPES
from torch_peer import VOCAB


def linear_shapes(name):
    """(in, out, count) of every linear layer of the benchmark model, as normlab-cli bench --gemm."""
    d, layers, _, _, _ = SHAPES[name]
    return [(d, 3 * d, layers), (d, VOCAB, 1), (d, d, layers), (d, 4 * d, layers), (4 * d, d, layers)]


def time_products(name, threads, warmup, rounds):
    torch.set_num_threads(threads)
    _, _, _, seq, batch = SHAPES[name]
    n = batch * seq
    # one set of buffers, the widest any layer needs, viewed at each layer's sizes (as bench --gemm does)
    widest = max(max(fan_in, fan_out) for fan_in, fan_out, _ in linear_shapes(name))
    inputs, outputs, output_grads, input_grads = (torch.randn(n * widest) for _ in range(4))
    weights, weight_grads = torch.randn(widest * widest), torch.empty(widest * widest)
    buffers = []
    for fan_in, fan_out, count in linear_shapes(name):
        rows_in, rows_out, weight = (n, fan_in), (n, fan_out), (fan_out, fan_in)
        buffers.append((inputs[:n * fan_in].view(rows_in), weights[:fan_out * fan_in].view(weight),
                        output_grads[:n * fan_out].view(rows_out), outputs[:n * fan_out].view(rows_out),
                        input_grads[:n * fan_in].view(rows_in), weight_grads[:fan_out * fan_in].view(weight), count))
    flops = sum(6.0 * n * fan_in * fan_out * count for fan_in, fan_out, count in linear_shapes(name))
    seconds = []
    for round_index in range(warmup + rounds):
        total = 0.0
        for x, w, dy, y, dx, dw, count in buffers:
            started = time.perf_counter()
            torch.mm(x, w.t(), out=y)  # y = x W^T
            torch.mm(dy, w, out=dx)  # dx = dy W
            torch.mm(dy.t(), x, out=dw)  # dW = dy^T x
            total += count * (time.perf_counter() - started)
        if round_index >= warmup:
            seconds.append(total)
    return {"shape": name, "threads": threads, "gemm_gflops": flops / statistics.median(seconds) / 1e9,
            "torch": torch.__version__, "blas": "mkl" if torch.backends.mkl.is_available() else "other"}


def main():
    parser = argparse.ArgumentParser(description="PyTorch's fp32 GEMM rate at the model's linear-layer sizes")
    parser.add_argument("--shapes", default="tiny,small,medium,deep")
    parser.add_argument("--threads", default="1,2", help="torch thread counts to try, comma-separated")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    for name in args.shapes.split(","):
        for threads in (int(t) for t in args.threads.split(",")):
            print(json.dumps(time_products(name, threads, args.warmup, args.rounds)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
