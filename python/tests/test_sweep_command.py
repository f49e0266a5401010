# A stability sweep of the user's own PyTorch script (normlab-cli sweep plan --command): 4 points of a
# tiny nanoGPT script that calls normlab.watch() with no folder (NORMLAB_RUN_DIR names it), 2 workers;
# one worker killed mid-point, the sweep finished by a second `sweep run`: every point's folder whole,
# no finished point run twice, the killed one run again; and a script that fails is `failed` with its
# stderr's last lines in summary.json.
import csv
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from cli_runner import cli_path, run_cli

HERE = Path(__file__).resolve().parent

SCRIPT = textwrap.dedent("""\
    import argparse, os, sys, time
    sys.path.insert(0, {tests!r})
    import torch
    import normlab
    from models import NanoGPT, batch

    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float)
    parser.add_argument("--width", type=int)
    parser.add_argument("--seed", type=int)
    args = parser.parse_args()
    with open(os.environ["SWEEP_STARTS"], "a") as starts:  # one line per start of a point
        starts.write(os.environ["NORMLAB_RUN_DIR"] + "\\n")
    with open(os.environ["SWEEP_STARTS"] + ".pids", "a") as pids:  # the script's process, to see it end
        pids.write(str(os.getpid()) + "\\n")
    if args.lr > 1:
        sys.exit("this learning rate is refused by the script itself")
    torch.manual_seed(args.seed)
    model = NanoGPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    with normlab.watch(model, optimizer, every=5, verbose=False) as w:
        for step in range(40):
            loss = model(batch(step)[:, :-1], batch(step)[:, 1:])[1]
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            w.log()
            time.sleep(float(os.environ.get("SWEEP_STEP_SLEEP", "0")))
""")


def sweep_env(tmp_path, sleep):
    env = dict(os.environ, SWEEP_STARTS=str(tmp_path / "starts.txt"), SWEEP_STEP_SLEEP=str(sleep),
               NORMLAB_TEST_CLAIM_STALE_SECONDS="3", PYTHONPATH=str(HERE.parent))
    return env


def plan(tmp_path, lrs, name="S"):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(tests=str(HERE)))
    sweep = tmp_path / name
    command = f"{sys.executable} {script} --lr {{user.lr}} --width {{user.width}} --seed {{seed}}"
    run_cli("sweep", "plan", "--command", command, "--axis", f"user.lr={lrs}", "--axis", "user.width=32",
            "--seeds", 2, "--out", sweep)
    return sweep


def workers_of(sweep):
    """The pids of the `sweep run-point` workers of `sweep`, from /proc (no procps needed)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"run-point" in words and str(sweep).encode() in words:
            found.append(int(entry.name))
    return sorted(found)


def starts(tmp_path):
    path = tmp_path / "starts.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_a_killed_worker_s_point_is_run_again_and_no_finished_point_twice(tmp_path):
    sweep = plan(tmp_path, "1e-3,3e-3")
    env = sweep_env(tmp_path, sleep=0.05)
    first = subprocess.Popen([cli_path(), "sweep", "run", str(sweep), "--jobs", "2"], env=env,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while len(starts(tmp_path)) < 2 and time.time() < deadline:
        time.sleep(0.1)
    assert len(starts(tmp_path)) >= 2, "the first workers never started their commands"
    time.sleep(1.0)  # both commands are training now
    victim = workers_of(sweep)[0]
    os.kill(victim, signal.SIGKILL)  # its command is stopped with it (SIGTERM: the run ends "stopped")
    first.wait(timeout=300)
    assert first.returncode == 1, first.stderr  # one point failed: the worker was killed

    second = run_cli("sweep", "run", str(sweep), "--jobs", "2", env=env)
    status = json.loads(run_cli("sweep", "status", sweep, "--json").stdout)
    assert status["totals"]["done"] == 4, (status, second.stderr)
    started = starts(tmp_path)
    runs = sweep / "runs"
    # Each point started once, the killed one twice: 5 starts for 4 points.
    assert len(started) == 5, started
    assert sorted(set(started)) == sorted(str(p) for p in runs.iterdir()), started
    for point in runs.iterdir():
        summary = json.loads((point / "summary.json").read_text())
        assert summary["status"] == "completed" and summary["steps"] == 40, (point, summary)
        lines = (point / "metrics.jsonl").read_text().splitlines()
        assert [json.loads(line)["step"] for line in lines] == list(range(1, 41)), point
        assert "--lr '" in (point / "command.txt").read_text()
    collected = run_cli("sweep", "collect", sweep)
    header = (sweep / "points.csv").read_text().splitlines()[0]
    assert "user.lr" in header and "user.width" in header, (header, collected.stderr)
    # user.lr is the learning rate: Wortsman et al.'s sensitivity over it, as computed from points.csv
    # (each lr's mean over seeds of min(final loss, initial loss), their mean minus the best).
    with (sweep / "lr_sensitivity.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 1 and rows[0]["user.width"] == "32", rows
    per_lr = {}
    with (sweep / "points.csv").open(newline="") as handle:
        for point in csv.DictReader(handle):
            final = float(point["final_val_loss"] or point["final_loss"])
            per_lr.setdefault(float(point["user.lr"]), []).append(min(final, float(point["initial_loss"])))
    means = [sum(values) / len(values) for values in per_lr.values()]
    assert len(means) == 2 and all(len(values) == 2 for values in per_lr.values()), per_lr
    assert abs(float(rows[0]["lr_sensitivity"]) - (sum(means) / len(means) - min(means))) < 1e-9, rows


def alive(pid):
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_for_starts(tmp_path, count):
    deadline = time.time() + 120
    while len(starts(tmp_path)) < count and time.time() < deadline:
        time.sleep(0.1)
    assert len(starts(tmp_path)) >= count, "the workers never started their commands"
    time.sleep(1.0)  # training now


@pytest.mark.parametrize("whom", ["process group", "sweep run alone"])
def test_ctrl_c_stops_the_scripts_and_the_next_run_finishes_the_sweep(tmp_path, whom):
    """Ctrl-C in a terminal signals the whole foreground group; `kill -INT` reaches `sweep run` alone.
    Either way no script outlives the sweep (one that did would write into a folder the next run
    empties), the points stopped are failed and say so, and the next run finishes them whole."""
    sweep = plan(tmp_path, "1e-3,3e-3")
    env = sweep_env(tmp_path, sleep=0.2)  # 40 steps of 0.2 s: still training when stopped
    first = subprocess.Popen([cli_path(), "sweep", "run", str(sweep), "--jobs", "2"], env=env,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    wait_for_starts(tmp_path, 2)
    stopped_at = time.time()
    if whom == "process group":
        os.killpg(first.pid, signal.SIGINT)
    else:
        os.kill(first.pid, signal.SIGINT)
    _, stderr = first.communicate(timeout=120)
    assert first.returncode == 130, stderr
    assert time.time() - stopped_at < 6, "the points ran on after the stop"
    pids = [int(p) for p in Path(str(tmp_path / "starts.txt") + ".pids").read_text().split()]
    assert not [pid for pid in pids if alive(pid)], "a script outlived its sweep"
    stopped = 0
    for point in (sweep / "runs").iterdir():
        summary = json.loads((point / "summary.json").read_text())
        if summary["status"] != "completed":
            assert summary["status"] == "failed" and "stopped (Ctrl-C or SIGTERM)" in summary["error"], summary
            stopped += 1
    assert stopped >= 2, "the stop came while the first two points trained"
    assert "failed: stopped" in stderr, stderr

    run_cli("sweep", "run", str(sweep), "--jobs", "2", env=sweep_env(tmp_path, sleep=0))
    for point in (sweep / "runs").iterdir():
        summary = json.loads((point / "summary.json").read_text())
        assert summary["status"] == "completed" and summary["steps"] == 40, (point, summary)
        lines = (point / "metrics.jsonl").read_text().splitlines()
        assert [json.loads(line)["step"] for line in lines] == list(range(1, 41)), point


def test_a_script_that_fails_leaves_its_point_failed_with_its_last_lines(tmp_path):
    sweep = plan(tmp_path, "1e-3,5", name="F")
    done = run_cli("sweep", "run", sweep, "--jobs", "2", env=sweep_env(tmp_path, sleep=0), check=False)
    assert done.returncode == 1, done.stderr
    status = json.loads(run_cli("sweep", "status", sweep, "--json").stdout)
    assert status["totals"]["done"] == 2 and status["totals"]["failed"] == 2, status
    failed = [p for p in (sweep / "runs").iterdir()
              if json.loads((p / "summary.json").read_text())["status"] == "failed"]
    for point in failed:
        error = json.loads((point / "summary.json").read_text())["error"]
        assert "exited 1" in error and "refused by the script itself" in error, error


def test_command_sweeps_refuse_what_they_cannot_run(tmp_path):
    out = tmp_path / "never"
    for arguments, words in [
        (["--command", "python t.py --lr {user.lr}", "--axis", "train.lr=1e-3"], "user.NAME"),
        (["--command", "python t.py", "--axis", "user.lr=1e-3"], "user.lr is not in the sweep's command"),
        (["--command", "python t.py --lr {user.lr} {nope}", "--axis", "user.lr=1e-3"], "{nope}"),
        (["--command", "python t.py --lr {user.lr", "--axis", "user.lr=1e-3"], "without its '}'"),
        (["--preset", "quickstart", "--axis", "user.lr=1e-3"], "\"command\""),
    ]:
        done = run_cli("sweep", "plan", *arguments, "--out", out, check=False)
        assert done.returncode == 2 and words in done.stderr, (arguments, done.stderr)
        assert not out.exists()
