# Under torch.compile (backend aot_eager, which traces the hooks without generating C++) the bridge logs
# the eager numbers (norm scales, output logits and q/k RMS included), and once every kind of step
# (logged, sampled, neither) has run once nothing is compiled again: the hooks read flags, never steps.
import pytest
import torch
from torch._dynamo.testing import CompileCounterWithBackend

import normlab
from models import assert_close, batch, loss_of, make

STEPS = 16


def train(kind, out, compiled):
    torch._dynamo.reset()
    model, optimizer = make(kind)
    counter = CompileCounterWithBackend("aot_eager")
    runnable = torch.compile(model, backend=counter) if compiled else model
    w = normlab.watch(runnable, optimizer, out=str(out), every=2, attn_every=4, verbose=False)
    frames = []
    for step in range(1, STEPS + 1):
        loss_of(kind, runnable, batch(step)).backward()
        optimizer.step()
        optimizer.zero_grad()
        frames.append(counter.frame_count)
    w.close()
    return normlab.load_run(out), frames


@pytest.mark.parametrize("kind", ["nanogpt", "gpt2"])
def test_compiled_model_logs_the_eager_numbers_without_recompiling(kind, tmp_path):
    eager, _ = train(kind, tmp_path / "eager", compiled=False)
    compiled, frames = train(kind, tmp_path / "compiled", compiled=True)
    assert compiled.config["torch"]["compiled"] is True
    print(kind, "compiles per step", frames)
    assert frames[0] > 0
    assert frames[-1] == frames[7], f"recompiled after warm-up: compile count per step {frames}"
    for step in range(1, STEPS + 1):
        assert_close(compiled.steps.loc[step, "loss"], eager.steps.loc[step, "loss"], rel=1e-5, what=f"loss {step}")
    logged = sorted(set(eager.blocks.step))
    assert sorted(set(compiled.blocks.step)) == logged
    for field in ("log_z_mean", "logit_max", "final_norm_scale_mean"):  # from the root's output and ln_f
        for step in logged:
            assert_close(compiled.steps.loc[step, field], eager.steps.loc[step, field], rel=1e-4, what=field)
    for field in ("resid", "resid_attn", "grad.w_qkv", "grad.w_2", "update_ratio", "attn_entropy", "attn_max_logit",
                  "q_rms", "norm1_scale_cv", "adam_grad_rms"):
        a = compiled.blocks.sort_values(["step", "block"])[field].to_numpy()
        b = eager.blocks.sort_values(["step", "block"])[field].to_numpy()
        for x, y in zip(a, b):
            if y == y:  # NaN where a field was not sampled, in both
                assert_close(x, y, rel=1e-4, what=f"{kind} {field}")
            else:
                assert x != x, f"{kind} {field}: {x} where eager logged nothing"
