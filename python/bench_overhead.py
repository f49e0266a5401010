# What normlab.watch costs a training step: two identical models train side by side, one watched (at the
# defaults, every=10 and attn_every=50), their steps alternating so both see the same machine load; the
# overhead is the ratio of their mean step times (median over repeats), also split into the steps that log
# nothing and the logged ones. Prints a table; see --help (--normlab times another checkout's bridge).
import argparse
import importlib
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "tests")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402


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


def load_normlab(folder):
    """The bridge package of `folder` (a checkout's python/ folder), or this checkout's."""
    sys.path.insert(0, os.path.abspath(folder or HERE))
    return importlib.import_module("normlab")


def train_step(kind, model, optimizer, tokens, clock, device):
    import models

    start = clock()
    models.loss_of(kind, model, tokens).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if device.type == "cuda":
        torch.cuda.synchronize()  # the GPU's work, not its queueing
    return clock() - start


def paired_step_times(normlab, kind, args, device, out):
    """(off, on) step times of one repeat: the unwatched and the watched model take turns, step by step
    (which goes first alternates), on the same batches."""
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    off_model, off_optimizer = build(kind, args, device)
    on_model, on_optimizer = build(kind, args, device)
    w = normlab.watch(on_model, on_optimizer, out=out, overwrite=True, verbose=False)
    off, on = [], []
    generator = torch.Generator().manual_seed(1)
    for step in range(args.steps):
        tokens = torch.randint(0, args.vocab, (args.batch, args.seq), generator=generator).to(device)
        pair = [(off_model, off_optimizer, off), (on_model, on_optimizer, on)]
        for model, optimizer, times in (pair if step % 2 == 0 else pair[::-1]):
            times.append(train_step(kind, model, optimizer, tokens, clock, device))
    w.close()
    return off[5:], on[5:]  # the first steps warm allocators up


def summary_row(kind, pairs):
    """The table's row from each repeat's (off, on) step times."""
    # the amortised figure: mean step time over all steps (logged ones included), median over repeats
    mean_off = statistics.median(statistics.fmean(off) for off, _ in pairs)
    mean_on = statistics.median(statistics.fmean(on) for _, on in pairs)
    overhead = statistics.median(statistics.fmean(on) / statistics.fmean(off) - 1 for off, on in pairs)
    # step k of a repeat is step k + 6 of training: logged when it is a multiple of 10 (50: sampled too)

    def median_ratio(logged):
        picked = [(a, b) for off, on in pairs for k, (a, b) in enumerate(zip(off, on))
                  if ((k + 6) % 10 == 0) == logged]
        return statistics.median(b for _, b in picked) / statistics.median(a for a, _ in picked) - 1

    return (f"{kind:10s} {1e3 * mean_off:12.2f} {1e3 * mean_on:11.2f} {100 * overhead:8.2f}% "
            f"{100 * median_ratio(False):11.2f}% {100 * median_ratio(True):12.2f}%")


def main():
    parser = argparse.ArgumentParser(description="What normlab.watch costs a training step (see the header).")
    parser.add_argument("--steps", type=int, default=200, help="steps of each model per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--models", default="nanogpt,gpt2,llama", help="of tests/models.py's BUILDERS")
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=256)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="under torchrun (WORLD_SIZE set) the models train in DDP (NCCL on cuda, else gloo)")
    parser.add_argument("--clock", default="wall", choices=["wall", "cpu"],
                        help="cpu: the process's CPU time (all its threads), not charged for waiting for a core")
    parser.add_argument("--normlab", default=None, help="time the bridge of this python/ folder (another "
                        "checkout) instead of this one's; the models are this checkout's")
    args = parser.parse_args()
    if args.clock == "cpu" and args.device != "cpu":
        parser.error("--clock cpu times CPU training only")
    normlab = load_normlab(args.normlab)
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
    print(f"normlab bridge overhead: bridge {os.path.dirname(normlab.__file__)}, torch {torch.__version__}, "
          f"{where}{group}, {args.clock} clock, load before {' '.join(load)}")
    print(f"models: {args.layers} blocks, d {args.width}, {args.heads} heads, vocab {args.vocab}, seq {args.seq}, "
          f"batch {args.batch}; {args.repeats} repeats of {args.steps} alternating off/on steps; "
          f"defaults every=10, attn_every=50\n")
    print(f"{'model':10s} {'off ms/step':>12s} {'on ms/step':>11s} {'overhead':>9s} "
          f"{'quiet steps':>12s} {'logged steps':>13s}")
    with tempfile.TemporaryDirectory() as scratch:
        for kind in args.models.split(","):
            pairs = [paired_step_times(normlab, kind, args, device, os.path.join(scratch, kind))
                     for _ in range(args.repeats)]
            print(summary_row(kind, pairs), flush=True)
    print(f"\noverhead: mean step time on / off - 1, median over repeats; quiet / logged steps: their median "
          f"step time on / off - 1. Load after {' '.join(open('/proc/loadavg').read().split()[:3])}")
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
