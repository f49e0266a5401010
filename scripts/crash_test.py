#!/usr/bin/env python3
"""Nothing lost on a crash: kills `normlab-cli train` (--cli-kills times), the window (--window-kills) and
a sweep worker (--sweep-kills) with SIGKILL at random moments of a run with periodic checkpoints, stops
sweep workers with SIGSTOP past the stale-claim age while a second worker takes their points over and
continues them with SIGCONT (--sweep-stops), then checks every run folder left behind:

- every complete line of metrics.jsonl and events.jsonl is valid JSON, in step order (metrics: one line
  per step from 1), and at most the last line is incomplete;
- summary.json is complete and valid (the old one or the new one, never half-written);
- the checkpoint is a whole safetensors file holding a multiple of train.checkpoint_every no later than
  the last logged step (never a torn file), and a sample of them resumes (`train --resume`);
- the folder still opens: `normlab-cli runs` reads it (the window's reader), and a sample opens in the
  window (`normlab --open ... --screenshot`);
- after the sweep's kills, `sweep run` finishes every point exactly once;
- after each stop, every point is trained exactly once and the stopped worker, continued, writes nothing
  into a point it lost (the runs folder is byte-for-byte what the second worker left); links planted in
  a point's folder (its metrics.jsonl, a temporary name) to a file outside leave that file unchanged.

Prints the counts; exits 1 when any check failed.

  python3 scripts/crash_test.py --cli build/app/normlab-cli --app build/app/normlab
"""
import argparse
import json
import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

EVERY = 20  # train.checkpoint_every of the runs killed
STEPS = 300
RUN_SETTINGS = ["--set", "model.layers=2", "--set", f"train.steps={STEPS}", "--set", f"train.checkpoint_every={EVERY}",
                "--set", "telemetry.every=5", "--set", "threads=1"]


def json_lines(path, problems, what):
    """The parsed complete lines of a .jsonl file; an incomplete last line is counted, not parsed."""
    if not path.exists():
        return [], False
    data = path.read_bytes()
    *complete, tail = data.split(b"\n")
    records = []
    for number, line in enumerate(complete, 1):
        try:
            records.append(json.loads(line))
        except ValueError:
            problems.append(f"{path}: line {number} of {len(complete)} complete lines is not JSON")
    return records, tail != b""


def safetensors_problem(path):
    """Why a checkpoint is not a whole safetensors file, or None; and its metadata."""
    data = path.read_bytes()
    if len(data) < 8:
        return "shorter than its header length", {}
    (length,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8:8 + length])
    except ValueError:
        return "header is not JSON", {}
    end = max((t["data_offsets"][1] for name, t in header.items() if name != "__metadata__"), default=0)
    if 8 + length + end != len(data):
        return f"{len(data)} bytes, header says {8 + length + end}", {}
    return None, header.get("__metadata__", {})


def check_folder(folder, counts, problems, cli):
    """Checks one run folder after a kill; updates counts and problems."""
    metrics, torn_metrics = json_lines(folder / "metrics.jsonl", problems, "metrics")
    events, torn_events = json_lines(folder / "events.jsonl", problems, "events")
    counts["incomplete last metrics line"] += torn_metrics
    counts["incomplete last events line"] += torn_events
    steps = [m.get("step") for m in metrics]
    if steps != list(range(1, len(steps) + 1)):
        problems.append(f"{folder}: metrics steps are not 1..{len(steps)} in order")
    event_steps = [e.get("step", 0) for e in events]
    if event_steps != sorted(event_steps):
        problems.append(f"{folder}: events out of order")
    summary_path = folder / "summary.json"
    if not summary_path.exists():
        if metrics:
            problems.append(f"{folder}: no summary.json after {len(metrics)} steps")
        counts["killed before the first summary"] += 1
    else:
        try:
            summary = json.loads(summary_path.read_text())
            counts[f"summary {summary['status']}"] += 1
        except (ValueError, KeyError):
            problems.append(f"{folder}: summary.json is not a complete summary")
    checkpoint = folder / "model.safetensors"
    counts["leftover .tmp files"] += len(list(folder.glob("*.tmp")))
    if checkpoint.exists():
        problem, metadata = safetensors_problem(checkpoint)
        step = int(metadata.get("normlab_step", -1)) if not problem else -1
        if problem:
            problems.append(f"{checkpoint}: torn ({problem})")
        elif step % EVERY != 0 or step > len(steps):
            problems.append(f"{checkpoint}: holds step {step}, metrics end at {len(steps)}")
        else:
            counts["checkpoints whole"] += 1
    if subprocess.run([cli, "runs", str(folder)], capture_output=True).returncode != 0:
        problems.append(f"{folder}: normlab-cli runs cannot read it")
    else:
        counts["folders read"] += 1


def resume_sample(folders, counts, problems, cli, scratch):
    """Resumes up to five of the checkpoints one step further."""
    with_checkpoint = [f for f in folders if (f / "model.safetensors").exists()][:5]
    for i, folder in enumerate(with_checkpoint):
        _, metadata = safetensors_problem(folder / "model.safetensors")
        step = int(metadata["normlab_step"])
        result = subprocess.run([cli, "train", "--resume", str(folder / "model.safetensors"), "--steps",
                                 str(step + 1), "--out", str(scratch / f"resumed{i}"), "--quiet"], capture_output=True)
        if result.returncode != 0:
            problems.append(f"{folder}: its checkpoint does not resume: {result.stderr.decode()[-300:]}")
        else:
            counts["checkpoints resumed"] += 1


def open_sample(folders, counts, problems, app, scratch):
    """Opens up to five folders in the window (offscreen) and saves a screenshot of each."""
    if not app:
        return
    environment = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    for i, folder in enumerate(folders[:5]):
        shot = scratch / f"open{i}.png"
        result = subprocess.run([app, "--open", str(folder), "--screenshot", str(shot), "--size", "1200x800"],
                                capture_output=True, env=environment, timeout=120)
        if result.returncode != 0 or not shot.exists():
            problems.append(f"{folder}: the window could not open it ({result.returncode})")
        else:
            counts["folders opened in the window"] += 1


def timed(command, environment=None):
    started = time.monotonic()
    subprocess.run(command, check=True, capture_output=True, env=environment)
    return time.monotonic() - started


def kill_at_random(command, seconds, environment=None):
    """Starts command in its own process group and SIGKILLs the group after a random time in [0, seconds]."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment,
                               start_new_session=True)
    time.sleep(random.uniform(0.0, seconds))
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    return process.wait() == -signal.SIGKILL


def cli_kills(cli, kills, scratch, counts, problems):
    train = [cli, "train", "--preset", "quickstart", *RUN_SETTINGS, "--quiet"]
    duration = timed([*train, "--out", str(scratch / "calibration")])
    folders = []
    for i in range(kills):
        folder = scratch / f"cli{i}"
        counts["cli runs killed"] += kill_at_random([*train, "--out", str(folder)], 1.1 * duration)
        if folder.exists():
            check_folder(folder, counts, problems, cli)
            folders.append(folder)
    return folders, duration


def window_kills(app, cli, kills, scratch, counts, problems):
    base = [app, "--preset", "quickstart", *RUN_SETTINGS, "--autostart"]
    calibration = dict(os.environ, QT_QPA_PLATFORM="offscreen", NORMLAB_RUNS_DIR=str(scratch / "window-calibration"))
    duration = timed([*base, "--quit-after-steps", str(STEPS)], calibration)
    folders = []
    for i in range(kills):
        runs = scratch / f"window{i}"
        environment = dict(os.environ, QT_QPA_PLATFORM="offscreen", NORMLAB_RUNS_DIR=str(runs))
        counts["window runs killed"] += kill_at_random(base, 1.1 * duration, environment)
        for folder in sorted(p for p in runs.glob("*") if p.is_dir()):
            check_folder(folder, counts, problems, cli)
            folders.append(folder)
    return folders, duration


def sweep_kills(cli, kills, scratch, counts, problems):
    sweep = scratch / "sweep"
    subprocess.run([cli, "sweep", "plan", "--preset", "quickstart", *RUN_SETTINGS, "--axis", "train.lr=1e-3,3e-3",
                    "--seeds", "3", "--out", str(sweep)], check=True, capture_output=True)
    points = json.loads((sweep / "sweep.json").read_text())["points"]
    for _ in range(kills):
        counts["sweep workers killed"] += kill_at_random([cli, "sweep", "run", str(sweep), "--jobs", "1", "--quiet"],
                                                         2.0)
    subprocess.run([cli, "sweep", "run", str(sweep), "--quiet"], check=True, capture_output=True)
    check_points_once(sweep, points, counts, problems, cli, "sweep")


STALE_SECONDS = 1.0  # NORMLAB_TEST_CLAIM_STALE_SECONDS of the stop test's workers (default 60 s)


def folder_state(folder):
    """Every file under `folder` with its size and modification time: what a writer changed."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def check_points_once(sweep, points, counts, problems, cli, what):
    """Every point of the sweep done, trained once (one metrics line per step), no claim left."""
    status = json.loads(subprocess.run([cli, "sweep", "status", str(sweep), "--json"], check=True,
                                       capture_output=True).stdout)
    states = {p["id"]: p["state"] for p in status["points"]}
    for point in points:
        folder = sweep / "runs" / point["id"]
        if states.get(point["id"]) not in ("done", "diverged"):
            problems.append(f"{what}: point {point['id']} is {states.get(point['id'])} after the resume")
        check_folder(folder, counts, problems, cli)
        metrics, _ = json_lines(folder / "metrics.jsonl", problems, "metrics")
        if [record.get("step") for record in metrics] != list(range(1, STEPS + 1)):
            problems.append(f"{what}: point {point['id']}: {len(metrics)} metrics lines, not steps 1..{STEPS} once")
        else:
            counts[f"{what} points finished once"] += 1
    if list((sweep / "claims").glob("*.json")):
        problems.append(f"{what}: claims left after it finished")


def sweep_stops(cli, stops, scratch, counts, problems):
    """A worker stopped (SIGSTOP: a suspended Slurm job, a long pause) for 1.5 to 4 stale ages at a random
    moment, a second worker run meanwhile, then the first continued (SIGCONT): each point once."""
    environment = dict(os.environ, NORMLAB_TEST_CLAIM_STALE_SECONDS=str(STALE_SECONDS))
    for i in range(stops):
        sweep = scratch / f"stopped{i}"
        subprocess.run([cli, "sweep", "plan", "--preset", "quickstart", *RUN_SETTINGS, "--axis",
                        "train.lr=1e-3,3e-3", "--out", str(sweep)], check=True, capture_output=True)
        points = json.loads((sweep / "sweep.json").read_text())["points"]
        # Hostile links planted in a point's folder (its log, a temporary name) point at a file outside
        # the sweep: whatever the workers do, stopped or not, that file must stay as it is.
        outside = scratch / f"outside{i}.txt"
        outside.write_text("not the sweep's\n")
        planted = sweep / "runs" / points[0]["id"]
        planted.mkdir(parents=True)
        for name in ("metrics.jsonl", "summary.json.tmp"):
            (planted / name).symlink_to(outside)
        first = subprocess.Popen([cli, "sweep", "run", str(sweep), "--jobs", "1", "--quiet"], env=environment,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        time.sleep(random.uniform(0.0, 2.0))
        if first.poll() is not None:
            counts["stopped workers that finished first"] += 1
        else:
            stop_and_continue(first, sweep, cli, environment, i, counts, problems)
        check_points_once(sweep, points, counts, problems, cli, "stop test")
        if outside.read_text() != "not the sweep's\n":
            problems.append(f"stop {i}: a worker wrote through a link planted in a point's folder")


def stop_and_continue(first, sweep, cli, environment, i, counts, problems):
    """Stops `first` past the stale age, lets a second worker finish the sweep, then continues it."""
    os.killpg(first.pid, signal.SIGSTOP)
    time.sleep(random.uniform(1.5, 4.0) * STALE_SECONDS)
    second = subprocess.run([cli, "sweep", "run", str(sweep), "--quiet"], env=environment,
                            capture_output=True, text=True)
    finished = folder_state(sweep / "runs")
    os.killpg(first.pid, signal.SIGCONT)
    _, stderr = first.communicate()
    counts["sweep workers stopped and continued"] += 1
    if second.returncode != 0:
        problems.append(f"stop {i}: the second worker exited {second.returncode}: {second.stderr[-300:]}")
    if first.returncode != 0:
        problems.append(f"stop {i}: the continued worker exited {first.returncode}: {stderr[-300:]}")
    if folder_state(sweep / "runs") != finished:
        problems.append(f"stop {i}: the continued worker wrote into points the second one had finished")

def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default="build/app/normlab-cli")
    parser.add_argument("--app", default="build/app/normlab", help="the window; '' to leave it out")
    parser.add_argument("--cli-kills", type=int, default=100)
    parser.add_argument("--window-kills", type=int, default=20)
    parser.add_argument("--sweep-kills", type=int, default=20)
    parser.add_argument("--sweep-stops", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    random.seed(args.seed)
    counts, problems = Counter(), []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="normlab_crash_") as scratch_name:
        scratch = Path(scratch_name)
        folders, cli_seconds = cli_kills(args.cli, args.cli_kills, scratch, counts, problems)
        resume_sample(folders, counts, problems, args.cli, scratch)
        open_sample(folders, counts, problems, args.app, scratch)
        if args.app and args.window_kills:
            window_kills(args.app, args.cli, args.window_kills, scratch, counts, problems)
        if args.sweep_kills:
            sweep_kills(args.cli, args.sweep_kills, scratch, counts, problems)
        if args.sweep_stops:
            sweep_stops(args.cli, args.sweep_stops, scratch, counts, problems)
    print(f"crash test: {STEPS}-step runs with a checkpoint every {EVERY} steps (one uninterrupted CLI run "
          f"{cli_seconds:.2f} s), {time.monotonic() - started:.0f} s in all")
    for name, count in sorted(counts.items()):
        print(f"  {name:38s} {count}")
    for problem in problems:
        print(f"  PROBLEM: {problem}")
    print("crash test: " + ("passed" if not problems else f"FAILED ({len(problems)} problems)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
