# What the bridge logs on one process equals direct computation (oracle.py, float64), for Hugging Face
# GPT-2 and Llama, nanoGPT- and torchtitan-Llama-shaped models and a plain module: loss, per-block
# gradient norms per role (1e-6), resid, resid_attn, attention entropy, largest logit (per head too) and
# q/k RMS over every row, norm scales, output logits, update ratio and RMS, Adam's v around the step.
import pytest
import torch

import normlab
from models import DEVICE, SEQ, assert_close, batch, loss_of, make
from oracle import BlockInputs, blocks_of
from oracle_run import assert_matches_oracle, train_with_oracle

KINDS = ["gpt2", "llama", "nanogpt", "plain", "titan"]


@pytest.mark.parametrize("kind", KINDS)
def test_logged_values_equal_direct_computation(kind, tmp_path):
    oracle = train_with_oracle(kind, tmp_path / kind)
    assert oracle.run.summary["status"] == "completed" and oracle.run.summary["steps"] == 3
    assert oracle.run.config["source"] == "normlab-torch" and oracle.run.config["model"]["layers"] == 3
    assert_matches_oracle(kind, oracle)
    # the final norm's fields exist where the model has one; the Adam eps fraction is not trivially 0 or 1
    assert ("final_norm_scale_mean" in oracle.run.steps.columns) == (kind != "plain")
    fractions = oracle.run.blocks.adam_eps_fraction
    assert ((fractions > 0) & (fractions < 1)).any(), list(fractions)


@pytest.mark.parametrize("kind", ["gpt2", "nanogpt"])
def test_block_norms_are_reported_before_clipping(kind, tmp_path):
    # A tight clip scales every gradient the optimizer sees; w.log(grad_norm=the pre-clip total) brings
    # the reported block norms back to the gradients backward produced.
    oracle = train_with_oracle(kind, tmp_path / kind, steps=2, clip=1e-3)
    logged = oracle.run.blocks[oracle.run.blocks.step == 2].sort_values("block")
    assert_close(oracle.run.steps.loc[2, "grad_norm"], oracle.norms[1], what="pre-clip total")
    for block, want in enumerate(oracle.blocks[1]):
        assert_close(logged.iloc[block]["grad.w_1"], want["grad"]["w_1"], what=f"block {block} pre-clip w_1")


def test_sampled_rows_bound_the_full_maximum(tmp_path):
    # With fewer sampled rows than positions the largest logit is a lower bound of the full maximum and
    # the entropy an estimate over those rows.
    full = train_with_oracle("gpt2", tmp_path / "full", steps=1)
    sampled_model, optimizer = make("gpt2")
    w = normlab.watch(sampled_model, optimizer, out=str(tmp_path / "sampled"), every=1, attn_every=1,
                      attn_rows=4, verbose=False)
    loss_of("gpt2", sampled_model, batch(1)).backward()
    optimizer.step()
    w.close()
    sampled = normlab.load_run(tmp_path / "sampled").blocks
    for block, want in enumerate(full.blocks[0]):
        assert sampled.iloc[block]["attn_max_logit"] <= want["attn_max_logit"] + 1e-6
        assert 0 < sampled.iloc[block]["attn_entropy"]


def test_cadence_logs_blocks_on_step_one_and_every_nth(tmp_path):
    model, optimizer = make("nanogpt")
    w = normlab.watch(model, optimizer, out=str(tmp_path / "run"), every=4, attn_every=8, verbose=False)
    for step in range(1, 18):
        loss_of("nanogpt", model, batch(step)).backward()
        optimizer.step()
        optimizer.zero_grad()
    w.close()
    run = normlab.load_run(tmp_path / "run")
    assert list(run.steps.index) == list(range(1, 18))
    assert sorted(set(run.blocks.step)) == [1, 4, 8, 12, 16]
    with_attention = run.blocks.dropna(subset=["attn_entropy"])
    assert sorted(set(with_attention.step)) == [1, 8, 16]
    assert run.steps.loss.notna().all()


@pytest.mark.parametrize("implementation", ["sdpa", "eager"])
def test_attention_follows_the_models_padding_mask(implementation, tmp_path):
    # Sequence 0 ends in 5 padding tokens: no query may attend to them, as the model's own mask says.
    from models import hf_gpt2
    from oracle import _qkv

    torch.manual_seed(0)
    model = hf_gpt2(implementation).to(DEVICE)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    w = normlab.watch(model, optimizer, out=str(tmp_path / "run"), every=1, attn_every=1, attn_rows=SEQ,
                      verbose=False)
    tokens = batch(1)
    mask = torch.ones_like(tokens)
    mask[0, -5:] = 0
    captured = BlockInputs(blocks_of("gpt2", model))
    labels = tokens.masked_fill(mask == 0, -100)
    model(input_ids=tokens, attention_mask=mask, labels=labels).loss.backward()
    captured.remove()
    allowed = torch.ones(SEQ, SEQ, dtype=torch.bool, device=DEVICE).tril() & (mask[0] == 1)[None, :]
    expected = []
    for i, block in enumerate(blocks_of("gpt2", model)):  # from the weights this forward used
        with torch.no_grad():
            q, k, _ = _qkv("gpt2", model, block, block.ln_1(captured.inputs[i]))
            expected.append(((q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5)[0].masked_fill(~allowed, float("-inf")))
    optimizer.step()
    w.close()
    logged = normlab.load_run(tmp_path / "run").blocks.sort_values("block")
    for i, logits in enumerate(expected):
        p = logits.softmax(-1)
        entropy = -(p * torch.where(p > 0, p.log(), torch.zeros_like(p))).sum(-1).mean()
        assert_close(logged.iloc[i]["attn_entropy"], float(entropy), rel=2e-5, what=f"block {i} entropy")
        assert_close(logged.iloc[i]["attn_max_logit"], float(logits[torch.isfinite(logits)].max()), rel=2e-5,
                     what=f"block {i} max logit")
