# What the bridge cannot log correctly it refuses at watch(), before training, with what to do: tensor
# parallelism (DTensor weights without fully_shard), roles that name no parameter, unknown roles, a
# model with no list of blocks, and bad cadences.
import os

import pytest
import torch
import torch.distributed as dist
from torch import nn

import normlab
from models import make


@pytest.fixture
def one_process_group(tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'init'}", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_tensor_parallel_weights_are_refused(tmp_path, one_process_group):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    model, _ = make("nanogpt")
    mesh = init_device_mesh("cpu", (1,))
    for block in model.transformer.h:
        parallelize_module(block, mesh, {"attn.c_attn": ColwiseParallel(), "attn.c_proj": RowwiseParallel()})
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="tensor parallelism is not supported"):
        normlab.watch(model, optimizer, out=str(tmp_path / "run"), verbose=False)
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_roles_that_do_not_match_the_model_are_refused_naming_its_parameters(tmp_path):
    model, optimizer = make("plain")
    with pytest.raises(ValueError, match="has no parameter 'attn.wqkv.weight'; its parameters are pre_attn.weight"):
        normlab.watch(model, optimizer, out=str(tmp_path / "a"), roles={"w_qkv": ["attn.wqkv.weight"]})
    with pytest.raises(ValueError, match="roles= has 'w_in'"):
        normlab.watch(model, optimizer, out=str(tmp_path / "b"), roles={"w_in": ["up.weight"]})
    with pytest.raises(ValueError, match="no sub-module 'ln2'"):
        normlab.watch(model, optimizer, out=str(tmp_path / "c"), roles={"attn_sum_input": "ln2"})


def test_a_model_without_blocks_and_bad_cadences_are_refused(tmp_path):
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="found no list of blocks in the model; pass blocks="):
        normlab.watch(nn.Linear(4, 4), optimizer, out=str(tmp_path / "a"))
    model, optimizer = make("nanogpt")
    with pytest.raises(ValueError, match="every and attn_rows must be at least 1"):
        normlab.watch(model, optimizer, out=str(tmp_path / "b"), every=0)
    with pytest.raises(ValueError, match="blocks='transformer.x' names no sub-module"):
        normlab.watch(model, optimizer, out=str(tmp_path / "c"), blocks="transformer.x")
    assert not any(os.scandir(tmp_path))
