# Training that goes wrong is recorded, never disturbed: a NaN in one block's gradient is reported as
# `diverged` in that block while the loop goes on; exceptions, Ctrl-C and a plain exit end the run as
# failed / stopped; a full disk or an unwritable folder is reported once and the bridge turns itself off.
import json
import os
import subprocess
import sys
import textwrap

import torch

import normlab
from models import batch, loss_of, make

HERE = os.path.dirname(os.path.abspath(__file__))


def train(model, optimizer, steps, before_step=None):
    for step in range(1, steps + 1):
        loss_of("nanogpt", model, batch(step)).backward()
        if before_step:
            before_step(step)
        optimizer.step()
        optimizer.zero_grad()


def test_nan_gradient_in_one_block_is_diverged_in_that_block(tmp_path):
    model, optimizer = make("nanogpt")
    w = normlab.watch(model, optimizer, out=str(tmp_path / "run"), every=2, verbose=False)

    def poison(step):
        if step == 4:
            model.transformer.h[1].mlp.c_fc.weight.grad[0, 0] = float("nan")

    train(model, optimizer, 8, poison)  # the loop runs all 8 steps: nothing was raised into it
    w.close()
    run = normlab.load_run(tmp_path / "run")
    assert list(run.events.kind) == ["diverged"]  # and no "stopped" from close()
    diverged = run.events[run.events.kind == "diverged"]
    assert int(diverged.iloc[0].step) == 4 and int(diverged.iloc[0].block) == 1
    assert run.summary["status"] == "diverged" and run.summary["diverged_at"] == 4
    assert run.summary["first_bad_layer"] == 1 and run.summary["steps"] == 8
    row = run.blocks[(run.blocks.step == 4) & (run.blocks.block == 1)].iloc[0]
    assert row["grad.w_1"] != row["grad.w_1"]  # written as null, read as NaN
    raw = open(tmp_path / "run" / "metrics.jsonl").read()
    assert "NaN" not in raw and "Infinity" not in raw


def test_loss_above_the_engine_bound_is_diverged(tmp_path):
    model, optimizer = make("nanogpt")
    w = normlab.watch(model, optimizer, out=str(tmp_path / "run"), every=5, verbose=False)
    for step in range(1, 7):
        loss = loss_of("nanogpt", model, batch(step))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        w.log(loss=loss.detach() * (100 if step == 3 else 1))  # the user's own loss replaces the captured one
    w.close()
    run = normlab.load_run(tmp_path / "run")
    assert run.summary["diverged_at"] == 3
    assert "above" in run.events[run.events.kind == "diverged"].iloc[0].message


def test_a_spike_is_reported_with_the_engine_rule(tmp_path):
    model, optimizer = make("nanogpt")
    w = normlab.watch(model, optimizer, out=str(tmp_path / "run"), every=10, spike_window=20, verbose=False,
                      diverge_loss=0)
    for step in range(1, 31):
        loss = loss_of("nanogpt", model, batch(step))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        w.log(loss=4.0 + 0.01 * (step % 3) + (1.0 if step == 25 else 0.0))
    w.close()
    spikes = normlab.load_run(tmp_path / "run").events.query("kind == 'loss_spike'")
    assert list(spikes.step) == [25]


def _script(tmp_path, body):
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{HERE!r}, {os.path.dirname(HERE)!r}]
        import normlab, torch
        from models import batch, loss_of, make
        model, optimizer = make("nanogpt")
        out = {str(tmp_path / "run")!r}
    """) + textwrap.dedent(body))
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)


def _summary(tmp_path):
    return json.load(open(tmp_path / "run" / "summary.json"))


def test_an_exception_ends_the_run_as_failed(tmp_path):
    result = _script(tmp_path, """
        with normlab.watch(model, optimizer, out=out, verbose=False):
            for step in range(1, 4):
                loss_of("nanogpt", model, batch(step)).backward(); optimizer.step(); optimizer.zero_grad()
            raise RuntimeError("out of data")
    """)
    assert result.returncode == 1 and "out of data" in result.stderr
    summary = _summary(tmp_path)
    assert summary["status"] == "failed" and "out of data" in summary["error"] and summary["steps"] == 3


def test_ctrl_c_ends_the_run_as_stopped(tmp_path):
    result = _script(tmp_path, """
        with normlab.watch(model, optimizer, out=out, verbose=False):
            loss_of("nanogpt", model, batch(1)).backward(); optimizer.step()
            raise KeyboardInterrupt
    """)
    assert result.returncode != 0
    assert _summary(tmp_path)["status"] == "stopped"


def test_sigterm_ends_the_run_as_stopped(tmp_path):
    # Slurm's preemption and time limits, torchrun stopping its workers: SIGTERM, with and without `with`
    for body in ("with normlab.watch(model, optimizer, out=out, verbose=False, overwrite=True):\n    {}",
                 "w = normlab.watch(model, optimizer, out=out, verbose=False, overwrite=True)\n{}"):
        step = ("loss_of('nanogpt', model, batch(1)).backward(); optimizer.step()\n"
                "import os, signal; os.kill(os.getpid(), signal.SIGTERM)\nraise AssertionError('not stopped')")
        indented = step.replace("\n", "\n    ") if body.startswith("with") else step
        result = _script(tmp_path, body.format(indented))
        assert result.returncode == 128 + 15, result.stderr
        summary = _summary(tmp_path)
        assert summary["status"] == "stopped" and summary["steps"] == 1, summary


def test_user_values_keep_their_types_and_the_last_val_loss_is_final(tmp_path):
    model, optimizer = make("nanogpt")
    w = normlab.watch(model, optimizer, out=str(tmp_path / "run"), every=2, verbose=False)
    for step in range(1, 6):
        loss_of("nanogpt", model, batch(step)).backward()
        optimizer.step()
        optimizer.zero_grad()
        w.log(val_loss=10.0 - step if step < 5 else None)
    w.event("lr halved", key="train.lr", value=0.5)
    w.event("data swapped", value="shard-2")
    w.event("odd", value=float("nan"))
    w.close()
    events = [json.loads(line) for line in open(tmp_path / "run" / "events.jsonl")]
    assert [e["value"] for e in events if e["kind"] == "change"] == [0.5, "shard-2", "nan"]
    assert _summary(tmp_path)["final_val_loss"] == 6.0  # step 4's; step 5 logged none


def test_exit_without_close_is_stopped_and_an_uncaught_error_failed(tmp_path):
    _script(tmp_path, """
        w = normlab.watch(model, optimizer, out=out, verbose=False)
        loss_of("nanogpt", model, batch(1)).backward(); optimizer.step()
    """)
    assert _summary(tmp_path)["status"] == "stopped" and _summary(tmp_path)["steps"] == 1
    _script(tmp_path, """
        w = normlab.watch(model, optimizer, out=out, verbose=False, overwrite=True)
        loss_of("nanogpt", model, batch(1)).backward(); optimizer.step()
        raise ValueError("bad batch")
    """)
    assert _summary(tmp_path)["status"] == "failed" and "bad batch" in _summary(tmp_path)["error"]


def test_a_full_disk_is_reported_once_and_training_goes_on(tmp_path, capfd):
    model, optimizer = make("nanogpt")
    out = tmp_path / "run"
    w = normlab.watch(model, optimizer, out=str(out), every=1, verbose=False)
    os.symlink("/dev/full", out / "metrics.jsonl")  # every write to it fails with ENOSPC
    train(model, optimizer, 6)
    w.close()
    errors = [line for line in capfd.readouterr().err.splitlines() if line.startswith("normlab:")]
    assert len(errors) == 1 and "No space left on device" in errors[0], errors
    events = [json.loads(line) for line in open(out / "events.jsonl")]
    assert [e["kind"] for e in events] == ["failed"] and "metrics.jsonl" in events[0]["message"]
    assert w.disabled is not None


def test_an_unwritable_folder_turns_the_bridge_off_without_raising(tmp_path, capfd):
    model, optimizer = make("nanogpt")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    w = normlab.watch(model, optimizer, out=str(blocker / "run"), verbose=False)
    train(model, optimizer, 3)
    w.close()
    assert "cannot write the run folder" in capfd.readouterr().err
    assert w.disabled is not None


def test_a_second_writer_is_refused_and_an_old_run_kept(tmp_path):
    model, optimizer = make("nanogpt")
    first = normlab.watch(model, optimizer, out=str(tmp_path / "run"), verbose=False)
    for options in ({}, {"overwrite": False}):
        try:
            normlab.watch(model, optimizer, out=str(tmp_path / "run"), verbose=False, **options)
            raise AssertionError("a second watch on the same folder was accepted")
        except ValueError as problem:
            assert "choose another out= folder" in str(problem)
    first.close()
    try:
        normlab.watch(model, optimizer, out=str(tmp_path / "run"), verbose=False)
        raise AssertionError("an existing run was overwritten without overwrite=True")
    except ValueError as problem:
        assert "already holds a run" in str(problem)
    assert json.load(open(tmp_path / "run" / "summary.json"))["status"] == "completed"
