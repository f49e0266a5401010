# One rank of the distributed tests (started by torch.multiprocessing.spawn with the gloo backend):
# trains the nanoGPT-shaped model on its half of each batch under DDP, FSDP2 or HSDP, optionally in
# micro-batches under no_sync, with normlab.watch recording (attention too); rank 0 writes the folder.
import contextlib
import os

import torch
import torch.distributed as dist

import normlab
from models import ADAM_EPS, SEQ, batch, loss_of, make

STEPS, BATCH = 4, 4


def shared_first_batch(step):
    """A batch whose sequence 2 repeats sequence 0: each of 2 ranks samples attention from the first
    sequence of its half, so both sample what one process with the whole batch samples, while the
    other sequences (1 and 3) still differ between the ranks."""
    tokens = batch(step, BATCH)
    tokens[2] = tokens[0]
    return tokens


def wrap(mode, model, world):
    if mode.startswith("ddp"):
        return torch.nn.parallel.DistributedDataParallel(model)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh("cpu", (world,)) if mode == "fsdp2" else init_device_mesh(
        "cpu", (world, 1), mesh_dim_names=("replicate", "shard"))
    for block in model.transformer.h:
        fully_shard(block, mesh=mesh)
    return fully_shard(model, mesh=mesh)


def run_rank(rank, world, mode, out, init_file):
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"  # loopback, whatever the machine's hostname resolves to
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    torch.set_num_threads(1)
    model, _ = make("nanogpt")
    wrapped = wrap(mode, model, world)
    optimizer = torch.optim.AdamW(wrapped.parameters(), lr=3e-3, weight_decay=0.1, eps=ADAM_EPS)
    w = normlab.watch(wrapped, optimizer, out=out, every=1, attn_every=1, attn_rows=SEQ, verbose=False)
    share = BATCH // world
    for step in range(1, STEPS + 1):
        mine = shared_first_batch(step)[rank * share:(rank + 1) * share]
        micro = mine.split(1) if mode == "ddp_accum" else [mine]
        for i, part in enumerate(micro):
            last = i == len(micro) - 1
            sync = contextlib.nullcontext() if last or mode != "ddp_accum" else wrapped.no_sync()
            with sync:
                (loss_of("nanogpt", wrapped, part) / len(micro)).backward()
        optimizer.step()
        optimizer.zero_grad()
        if mode == "ddp" and rank == 0:  # many scripts log from rank 0 alone: that must not hang
            w.log(val_loss=float(step))
    w.close()
    dist.barrier()  # no rank tears gloo down while another still talks to it
    dist.destroy_process_group()
    # Leave without the interpreter's shutdown: gloo's threads of the 2-D (HSDP) mesh's groups have
    # aborted it now and then ("terminate called without an active exception", about 1 in 80 runs
    # here). Everything the test reads was written and closed above.
    os._exit(0)
