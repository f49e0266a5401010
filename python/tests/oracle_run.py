# Trains a tiny model for a few steps with normlab.watch logging every step and attention on every row,
# while oracle.py computes, from the same forwards and optimizer steps, what each step should log; then
# checks the run folder against it (test_oracle.py on one process, test_distributed.py's reference).
from dataclasses import dataclass
from typing import Callable, List

import torch

import normlab
from models import SEQ, assert_close, batch, log_loss, loss_of, make, watch_options
from oracle import BlockInputs, blocks_of, expected_final_norm, expected_forward, expected_logits, expected_step

# Per-block fields compared with the oracle (with the per-role gradient norms and the per-head logits).
BLOCK_FIELDS = ("resid", "resid_attn", "update_ratio", "update_rms", "attn_entropy", "attn_max_logit", "q_rms",
                "k_rms", "norm1_scale_mean", "norm1_scale_cv", "norm2_scale_mean", "norm2_scale_cv",
                "adam_grad_rms", "adam_eps_fraction")


@dataclass
class OracleRun:
    run: "normlab.reader.Run"
    blocks: List[List[dict]]  # per step, per block: the expected fields
    steps: List[dict]  # per step: the expected run-level fields (output logits, final norm scale)
    losses: List[float]
    norms: List[float]  # the global gradient norm before any clipping


def train_with_oracle(kind, out, steps=3, clip=None, batches: Callable = batch, **options) -> OracleRun:
    model, optimizer = make(kind)
    w = normlab.watch(model, optimizer, out=str(out), every=1, attn_every=1, attn_rows=SEQ, verbose=False,
                      **watch_options(kind), **options)
    oracle = OracleRun(None, [], [], [], [])
    for step in range(1, steps + 1):
        captured = BlockInputs(blocks_of(kind, model), root=model)
        loss = loss_of(kind, model, batches(step))
        captured.remove()
        forward = expected_forward(kind, model, captured)
        oracle.steps.append({**expected_logits(kind, captured.model_output),
                             **expected_final_norm(kind, model, captured)})
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
        total = torch.nn.utils.clip_grad_norm_(model.parameters(), clip) if clip else None
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
        optimizer.zero_grad()
        after = {n: p.detach().clone() for n, p in model.named_parameters()}
        w.log(loss=loss if log_loss(kind) else None, grad_norm=total)
        oracle.blocks.append(expected_step(kind, model, forward, grads, before, after, optimizer))
        oracle.losses.append(float(loss.detach()))
        oracle.norms.append(float(torch.sqrt(sum(g.double().square().sum() for g in grads.values()))))
    w.close()
    oracle.run = normlab.load_run(out)
    return oracle


def assert_matches_oracle(kind, oracle: OracleRun, rel=2e-5):
    """Every logged value of every step equals the oracle's: loss and gradient norms to 1e-6, the rest
    to `rel` (float32 forwards against float64 recomputation)."""
    steps, blocks = oracle.run.steps, oracle.run.blocks
    for step in range(1, len(oracle.losses) + 1):
        assert_close(steps.loc[step, "loss"], oracle.losses[step - 1], what=f"{kind} loss at step {step}")
        assert_close(steps.loc[step, "grad_norm"], oracle.norms[step - 1], what=f"{kind} grad_norm at step {step}")
        for field, value in oracle.steps[step - 1].items():
            assert_close(steps.loc[step, field], value, rel=rel, what=f"{kind} step {step} {field}")
        logged = blocks[blocks.step == step].sort_values("block")
        for block, want in enumerate(oracle.blocks[step - 1]):
            row = logged.iloc[block]
            what = f"{kind} step {step} block {block}"
            for role, value in want["grad"].items():
                assert_close(row[f"grad.{role}"], value, what=f"{what} grad.{role}")
            for field in BLOCK_FIELDS:
                assert_close(row[field], want[field], rel=rel, what=f"{what} {field}")
            assert len(row["attn_head_max_logit"]) == len(want["attn_head_max_logit"])
            for head, value in enumerate(want["attn_head_max_logit"]):
                assert_close(row["attn_head_max_logit"][head], value, rel=rel, what=f"{what} head {head}")
