# Two processes (gloo, CPU) log what one process with the whole batch logs: DDP with each rank half the
# batch, DDP accumulating micro-batches under no_sync, FSDP2 (sharded gradients reduced over the shard
# group only) and HSDP (replicas not counted twice). Only rank 0 writes.
import os

import pytest
import torch
import torch.multiprocessing as mp

import normlab
from dist_worker import BATCH, STEPS, run_rank
from models import assert_close, batch, loss_of, make

BLOCK_FIELDS = ("resid", "resid_attn", "update_ratio", "grad.w_qkv", "grad.w_o", "grad.w_1", "grad.w_2",
                "grad.norm1", "grad.norm2")


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    out = tmp_path_factory.mktemp("single") / "run"
    model, optimizer = make("nanogpt")
    w = normlab.watch(model, optimizer, out=str(out), every=1, attn_every=0, verbose=False)
    for step in range(1, STEPS + 1):
        loss_of("nanogpt", model, batch(step, BATCH)).backward()
        optimizer.step()
        optimizer.zero_grad()
    w.close()
    return normlab.load_run(out)


@pytest.mark.parametrize("mode", ["ddp", "ddp_accum", "fsdp2", "hsdp"])
def test_two_processes_log_what_one_process_logs(mode, single, tmp_path):
    out = tmp_path / "run"
    mp.spawn(run_rank, args=(2, mode, str(out), str(tmp_path / "init")), nprocs=2, join=True)
    run = normlab.load_run(out)
    assert run.config["torch"]["world_size"] == 2
    assert run.config["torch"]["parallel"] == ("ddp" if mode.startswith("ddp") else "fsdp2")
    assert run.summary["status"] == "completed" and run.summary["steps"] == STEPS
    for step in range(1, STEPS + 1):
        for field in ("loss", "grad_norm"):
            assert_close(run.steps.loc[step, field], single.steps.loc[step, field], rel=1e-5,
                         what=f"{mode} step {step} {field}")
        mine = run.blocks[run.blocks.step == step].sort_values("block")
        theirs = single.blocks[single.blocks.step == step].sort_values("block")
        for block in range(len(theirs)):
            for field in BLOCK_FIELDS:
                assert_close(mine.iloc[block][field], theirs.iloc[block][field], rel=1e-5,
                             what=f"{mode} step {step} block {block} {field}")
    if mode == "ddp":  # w.log called on rank 0 only
        assert list(run.steps.val_loss) == [float(s) for s in range(1, STEPS + 1)]
    # rank 1 wrote nothing: the folder holds one writer's files
    files = {"config.json", "metrics.jsonl", "provenance.json", "summary.json"}
    assert set(os.listdir(out)) in (files, files | {"events.jsonl"})
