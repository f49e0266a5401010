#!/usr/bin/env python3
"""An independent reference for Xiong et al.'s Figure 3 (a, b): the simplified model of docs/science.md
("What happens at initialisation") written from its description alone (Xavier normal, d_ff = d,
W_Q = W_K = 0 so attention averages x W_V uniformly, no output projection, ReLU, unit-variance inputs), as a
6 + 6 encoder-decoder at initialisation, with uniformly random tokens. Prints, per decoder block,
||mean over batches of grad W2||_F averaged over seeds, for Post-LN and Pre-LN: what NormLab's `probe`
measures on the presets theory-encdec-postln / -preln. Not part of the test suite (NormLab's own
gradients are checked against PyTorch by torch_parity.py)."""
import argparse
import math

import torch
import torch.nn.functional as F


def xavier(rows, columns, generator):
    return torch.randn(rows, columns, generator=generator) * math.sqrt(2.0 / (rows + columns))


def layer_norm(x):
    return F.layer_norm(x, (x.shape[-1],))


def decoder_w2_gradients(placement, layers, d, seq, batch, batches, seed, vocab=65):
    """Per decoder block, the norm of the batch-mean gradient of W2 at initialisation."""
    g = torch.Generator().manual_seed(seed)
    source = seq // 2

    def block(cross):
        names = ["v", "w1", "w2"] + (["cross_v"] if cross else [])
        return {name: xavier(d, d, g).requires_grad_() for name in names}

    encoder = [block(False) for _ in range(layers)]
    decoder = [block(True) for _ in range(layers)]
    wte = torch.randn(vocab, d, generator=g) * math.sqrt(0.5)  # token + position: unit variance in total
    wpe = torch.randn(seq, d, generator=g) * math.sqrt(0.5)
    head = xavier(vocab, d, g)
    causal = torch.tril(torch.ones(seq, seq))
    causal /= causal.sum(-1, keepdim=True)
    over_source = torch.zeros(seq, seq)
    over_source[:, :source] = 1.0 / source

    def sublayer(x, branch):
        return x + branch(layer_norm(x)) if placement == "pre" else layer_norm(x + branch(x))

    def stack(x, blocks, mixing, memory=None):
        for p in blocks:
            x = sublayer(x, lambda u: mixing @ (u @ p["v"].T))
            if memory is not None:
                x = sublayer(x, lambda u: over_source @ (memory @ p["cross_v"].T))
            x = sublayer(x, lambda u: torch.relu(u @ p["w1"].T) @ p["w2"].T)
        return layer_norm(x) if placement == "pre" else x

    mean_grads = [torch.zeros(d, d) for _ in range(layers)]
    for _ in range(batches):
        tokens = torch.randint(0, vocab, (batch, seq + 1), generator=g)
        embedded = wte[tokens[:, :-1]] + wpe
        x = stack(embedded, decoder, causal, stack(embedded, encoder, over_source))
        targets = tokens[:, 1:].clone()
        targets[:, :source - 1] = -1  # what the memory holds is not scored
        loss = F.cross_entropy((x @ head.T).reshape(-1, vocab), targets.reshape(-1), ignore_index=-1)
        for total, grad in zip(mean_grads, torch.autograd.grad(loss, [p["w2"] for p in decoder])):
            total += grad / batches
    return [float(total.norm()) for total in mean_grads]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=32)
    parser.add_argument("--d-model", type=int, default=128)
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)
    for placement in ("post", "pre"):
        profile = [0.0] * 6
        for seed in range(1, args.seeds + 1):
            gradients = decoder_w2_gradients(placement, 6, args.d_model, 8, 16, 8, seed)
            profile = [a + b / args.seeds for a, b in zip(profile, gradients)]
        print(f"{placement}-LN  " + " ".join(f"{v:.3f}" for v in profile) +
              f"  last/first {profile[-1] / profile[0]:.2f}  max/min {max(profile) / min(profile):.2f}")


if __name__ == "__main__":
    main()
