#!/usr/bin/env python3
# The PyTorch peer of `normlab-cli bench`: the same Pre-LN decoder (LayerNorm, ReLU, biases, untied head)
# trained with Adam on random tokens of a 65-symbol vocabulary, timed per step after a warm-up, at
# each asked thread count, on the CPU or (--device cuda, fp32 without TF32, as NormLab) on the GPU.
# Prints one JSON line per (shape, mode, threads): median steps/s.
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from shapes import SHAPES

VOCAB = 65


class Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, d)
        self.norm2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)

    def attention(self, u):
        b, t, d = u.shape
        q, k, v = self.qkv(u).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if hasattr(F, "scaled_dot_product_attention"):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # PyTorch 1.x: the explicit causal softmax
            scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
            mask = torch.ones(t, t, dtype=torch.bool, device=u.device).triu(1)
            o = scores.masked_fill(mask, float("-inf")).softmax(-1) @ v
        return self.out(o.transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.fc2(F.relu(self.fc1(self.norm2(x))))


class Decoder(torch.nn.Module):
    def __init__(self, d, layers, heads, seq):
        super().__init__()
        self.wte = torch.nn.Embedding(VOCAB, d)
        self.wpe = torch.nn.Embedding(seq, d)
        self.blocks = torch.nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.final_norm = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, VOCAB, bias=False)

    def forward(self, tokens, targets):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.final_norm(x))
        return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))


def time_shape(name, mode, threads, warmup, steps, device="cpu"):
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    d, layers, heads, seq, batch = SHAPES[name]
    model = Decoder(d, layers, heads, seq).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-8)
    forward = torch.compile(model) if mode == "compile" else model
    tokens = torch.randint(0, VOCAB, (batch, seq), device=device)
    targets = torch.randint(0, VOCAB, (batch, seq), device=device)

    def train_step():
        optimizer.zero_grad(set_to_none=True)
        loss = forward(tokens, targets)
        loss.backward()
        optimizer.step()
        if device == "cuda":
            torch.cuda.synchronize()  # time the GPU's work, not its queueing
        return loss

    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    compile_started = time.perf_counter()
    for _ in range(warmup):
        train_step()
    warmup_seconds = time.perf_counter() - compile_started
    seconds = []
    for _ in range(steps):
        started = time.perf_counter()
        train_step()
        seconds.append(time.perf_counter() - started)
    median = statistics.median(seconds)
    return {
        "shape": name,
        "mode": mode,
        "threads": threads,
        "steps_per_s": 1.0 / median,
        "ms_per_step": median * 1e3,
        "tokens_per_s": batch * seq / median,
        "peak_device_mb": torch.cuda.max_memory_allocated() / 2**20 if device == "cuda" else 0.0,
        "warmup_s": warmup_seconds,
        "torch": torch.__version__,
        "device": device,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shapes", default="tiny,small,medium,deep")
    parser.add_argument("--modes", default="eager", help="eager and/or compile, comma-separated")
    parser.add_argument("--threads", default="1,2", help="torch thread counts to try, comma-separated")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args()
    if args.device == "cuda":
        # fp32 products without TF32, as NormLab's cuBLAS calls
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    for name in args.shapes.split(","):
        for mode in args.modes.split(","):
            if mode == "compile" and not hasattr(torch, "compile"):
                continue
            for threads in (int(t) for t in args.threads.split(",")):
                # torch.compile traces and generates code during its warm-up steps
                warmup = args.warmup + (2 if mode == "compile" else 0)
                print(json.dumps(time_shape(name, mode, threads, warmup, args.steps, args.device)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
