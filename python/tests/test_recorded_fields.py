# What a bridge line holds is what was measured, never a placeholder: a field the run cannot measure
# (Adam's state under SGD, the update without update_ratio, attention on unsampled steps, roles and
# dependency ratios the bridge has no source for) is absent. And the norms the bridge recognises (their
# kind and eps, LlamaRMSNorm as RMSNorm) give config.json's model.norm_type.
import json

import pytest
import torch
from torch import nn

import normlab
from models import PLAIN_ROLES, WIDTH, batch, loss_of, make, watch_options
from normlab import norms

MEASURED_ALWAYS = {"resid", "resid_attn", "grad", "norm1_scale_mean", "norm1_scale_cv", "norm2_scale_mean",
                   "norm2_scale_cv"}
ATTENTION = {"attn_entropy", "attn_max_logit", "attn_head_max_logit", "q_rms", "k_rms"}
OPTIMIZER = {"update_ratio", "update_rms", "adam_grad_rms", "adam_eps_fraction"}
RUN_LEVEL = {"step", "loss", "lr", "grad_norm", "steps_per_s", "log_z_mean", "log_z_max_abs", "logit_mean",
             "logit_max", "final_norm_scale_mean", "final_norm_scale_cv"}


def logged_lines(tmp_path, optimizer_of=None, **options):
    model, optimizer = make("nanogpt")
    optimizer = optimizer_of(model) if optimizer_of else optimizer
    w = normlab.watch(model, optimizer, out=str(tmp_path / "run"), every=2, attn_every=4, verbose=False, **options)
    for step in range(1, 5):
        loss_of("nanogpt", model, batch(step)).backward()
        optimizer.step()
        optimizer.zero_grad()
    w.close()
    return [json.loads(line) for line in open(tmp_path / "run" / "metrics.jsonl")]


def test_adamw_run_writes_every_measured_field_and_nothing_else(tmp_path):
    lines = {line["step"]: line for line in logged_lines(tmp_path)}
    assert set(lines[3]) == {"step", "loss", "lr"}  # a step that logs nothing per block
    assert set(lines[1]) == set(lines[2]) == RUN_LEVEL | {"layers"}
    assert set(lines[4]["layers"][0]) == MEASURED_ALWAYS | ATTENTION | OPTIMIZER  # sampled
    assert set(lines[2]["layers"][0]) == MEASURED_ALWAYS | OPTIMIZER  # not sampled: no attention
    assert set(lines[2]["layers"][0]["grad"]) == {"w_qkv", "w_o", "w_1", "w_2", "norm1", "norm2"}


def test_sgd_without_update_ratio_writes_no_optimizer_field(tmp_path):
    lines = logged_lines(tmp_path, optimizer_of=lambda m: torch.optim.SGD(m.parameters(), lr=0.1),
                         update_ratio=False)
    for line in lines:
        for layer in line.get("layers", []):
            assert not OPTIMIZER & set(layer), layer.keys()
            assert "dependency" not in layer and not {"norm1_out", "norm2_out"} & set(layer["grad"])
        assert not {"z_loss", "grad_embedding", "grad_head"} & set(line)


def test_sgd_with_momentum_has_an_update_but_no_adam_state(tmp_path):
    lines = logged_lines(tmp_path, optimizer_of=lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9))
    layer = lines[1]["layers"][0]
    assert layer["update_rms"] > 0 and layer["update_ratio"] > 0
    assert "adam_grad_rms" not in layer and "adam_eps_fraction" not in layer


@pytest.mark.parametrize("kind, norm_type", [("gpt2", "layernorm"), ("nanogpt", "layernorm"), ("llama", "rmsnorm"),
                                             ("titan", "rmsnorm"), ("plain", "rmsnorm")])
def test_recognised_models_name_their_norm_type(kind, norm_type, tmp_path):
    model, optimizer = make(kind)
    normlab.watch(model, optimizer, out=str(tmp_path / "run"), verbose=False, **watch_options(kind)).close()
    config = json.load(open(tmp_path / "run" / "config.json"))
    assert config["model"]["norm_type"] == norm_type


class ScaledNorm(nn.Module):  # a norm the bridge does not know: no guess
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(WIDTH))

    def forward(self, x):
        return self.weight * x / x.norm(dim=-1, keepdim=True)


def test_an_unknown_norm_gives_no_norm_type_and_no_scale(tmp_path):
    model, optimizer = make("plain")
    for layer in model.stack:
        layer.pre_attn = ScaledNorm()
    optimizer = torch.optim.AdamW(model.parameters())
    w = normlab.watch(model, optimizer, out=str(tmp_path / "run"), every=1, verbose=False, roles=PLAIN_ROLES)
    loss_of("plain", model, batch(1)).backward()
    optimizer.step()
    w.close()
    config = json.load(open(tmp_path / "run" / "config.json"))
    assert "norm_type" not in config["model"]
    layer = json.loads(open(tmp_path / "run" / "metrics.jsonl").readline())["layers"][0]
    assert "norm1_scale_mean" not in layer and layer["norm2_scale_mean"] > 0


def test_norm_recognition_reads_kind_and_eps():
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    assert norms.recognise(LlamaRMSNorm(8, eps=1e-6)) == norms.NormKind("rmsnorm", 1e-6, 1)
    assert norms.recognise(nn.RMSNorm(8)) == norms.NormKind("rmsnorm", None, 1)
    assert norms.recognise(nn.LayerNorm((4, 8), eps=1e-3)) == norms.NormKind("layernorm", 1e-3, 2)

    class LayerNorm(nn.Module):  # nanoGPT's own, which calls F.layer_norm(..., 1e-5)
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(8))

    assert norms.recognise(LayerNorm()) == norms.NormKind("layernorm", 1e-5, 1)
    assert norms.recognise(ScaledNorm()) is None and norms.recognise(nn.Linear(2, 2)) is None


def test_token_scales_are_one_over_std():
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    layer = norms.token_scales(x, norms.NormKind("layernorm", 1e-5, 1)).double()
    rms = norms.token_scales(x, norms.NormKind("rmsnorm", None, 1)).double()
    torch.testing.assert_close(layer, 1 / torch.sqrt(x.var(-1, unbiased=False) + 1e-5), rtol=1e-6, atol=0)
    eps = torch.finfo(torch.float64).eps  # nn.RMSNorm(eps=None): the input's machine epsilon
    torch.testing.assert_close(rms, 1 / torch.sqrt(x.square().mean(-1) + eps), rtol=1e-6, atol=0)
