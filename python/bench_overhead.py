# What normlab.watch costs a training step, measured as the README asks: interleaved runs of the same
# model with the bridge off and on (at its defaults, every=10 and attn_every=50), median step time of
# each, and the overhead as their ratio; also the cost on the steps that log nothing. Prints a table.
# Usage: python bench_overhead.py [--steps 200] [--repeats 5] [--models nanogpt,gpt2,llama] [--device cuda]
# [--clock cpu]. On a GPU under torchrun (WORLD_SIZE set) the model trains in DDP over NCCL. --clock cpu
# times steps in the process's CPU time (all its threads), which a machine shared with other work skews less.
import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "tests")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import normlab  # noqa: E402


def build(kind, args, device):
    """A GPT of the tests' shapes at the asked size (by default one where a CPU step takes tens of
    milliseconds), wrapped in DistributedDataParallel when a process group is up."""
    import models

    models.WIDTH, models.LAYERS, models.HEADS = args.width, args.layers, args.heads
    models.SEQ, models.VOCAB = args.seq, args.vocab
    torch.manual_seed(0)
    model = models.BUILDERS[kind]().to(device)
    if torch.distributed.is_initialized():
        model = torch.nn.parallel.DistributedDataParallel(model)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-3)


def step_times(kind, model, optimizer, args, device, watched, out):
    import models

    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    w = normlab.watch(model, optimizer, out=out, overwrite=True, verbose=False) if watched else None
    times = []
    generator = torch.Generator().manual_seed(1)
    for step in range(args.steps):
        tokens = torch.randint(0, args.vocab, (args.batch, args.seq), generator=generator).to(device)
        start = clock()
        loss = models.loss_of(kind, model, tokens)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize()  # the GPU's work, not its queueing
        times.append(clock() - start)
    if w is not None:
        w.close()
    return times[5:]  # the first steps warm allocators up


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--models", default="nanogpt,gpt2")
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=256)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--clock", default="wall", choices=["wall", "cpu"])
    args = parser.parse_args()
    if args.clock == "cpu" and args.device != "cpu":
        parser.error("--clock cpu times CPU training only")
    device = torch.device(args.device)
    if "WORLD_SIZE" in os.environ:
        torch.distributed.init_process_group("nccl" if device.type == "cuda" else "gloo")
    if device.type == "cpu":
        torch.set_num_threads(1)
    else:  # fp32 products as written, as NormLab's own CUDA backend computes them
        torch.backends.cuda.matmul.allow_tf32 = False
    load = open("/proc/loadavg").read().split()[:3]
    where = torch.cuda.get_device_name() if device.type == "cuda" else "1 thread"
    group = f", DDP over {torch.distributed.get_backend()} x{torch.distributed.get_world_size()}" \
        if torch.distributed.is_initialized() else ""
    print(f"normlab bridge overhead: torch {torch.__version__}, {where}{group}, {args.clock} clock, "
          f"load before {' '.join(load)}")
    print(f"models: {args.layers} blocks, d {args.width}, {args.heads} heads, vocab {args.vocab}, seq {args.seq}, "
          f"batch {args.batch}; {args.repeats} interleaved off/on pairs of {args.steps} steps; "
          f"defaults every=10, attn_every=50\n")
    print(f"{'model':10s} {'off ms/step':>12s} {'on ms/step':>11s} {'overhead':>9s} "
          f"{'quiet steps':>12s} {'logged steps':>13s}")
    with tempfile.TemporaryDirectory() as scratch:
        for kind in args.models.split(","):
            model, optimizer = build(kind, args, device)
            off, on = [], []
            for repeat in range(args.repeats):
                order = (False, True) if repeat % 2 == 0 else (True, False)
                for watched in order:
                    times = step_times(kind, model, optimizer, args, device, watched, os.path.join(scratch, kind))
                    (on if watched else off).append(times)
            flat_off = [t for run in off for t in run]
            flat_on = [t for run in on for t in run]
            # step k of a run is step k + 6 of training: logged when it is 1 or a multiple of 10 (or 50)
            quiet = [t for run in on for k, t in enumerate(run) if (k + 6) % 10]
            logged = [t for run in on for k, t in enumerate(run) if (k + 6) % 10 == 0]
            median_off = statistics.median(flat_off)
            # the amortised figure: mean over all steps (logged steps included), median over repeats
            mean_off = statistics.median(statistics.fmean(run) for run in off)
            mean_on = statistics.median(statistics.fmean(run) for run in on)
            print(f"{kind:10s} {1e3 * mean_off:12.2f} {1e3 * mean_on:11.2f} {100 * (mean_on / mean_off - 1):8.2f}% "
                  f"{100 * (statistics.median(quiet) / median_off - 1):11.2f}% "
                  f"{100 * (statistics.median(logged) / median_off - 1):12.2f}%")
    print(f"\nquiet / logged steps: median step time against the median with the bridge off. "
          f"Load after {' '.join(open('/proc/loadavg').read().split()[:3])}")
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
