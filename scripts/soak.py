#!/usr/bin/env python3
"""Soak benchmark: long runs must keep their memory flat and their speed. Runs `normlab-cli train` for
--cli-steps steps of a tiny model (1 block, d 16) and the window (offscreen) with three compared runs of
the same model for --window-steps steps each, samples the process's resident memory and progress twice
a second, and prints a table: resident memory at 1%, 50% and 100% of the run, its growth after
warm-up (100% against 1%), steps/s over the first and last 5% of the run and their ratio, and for the
window the GUI thread's share of the process's CPU time. Flat means growth within 10%; no decay means an
end/start speed ratio of at least 0.9. Exit 1 when either fails.

  python3 scripts/soak.py                                   # 1M CLI steps, 3 x 100k in the window
  python3 scripts/soak.py --cli-steps 100000 --window-steps 10000
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TINY = {"model.layers": 1, "model.d_model": 16, "model.heads": 2, "model.d_ff": 32, "model.seq_len": 16,
        "train.batch_size": 4, "telemetry.every": 100, "telemetry.val_every": 0, "threads": 1}
PAGE = os.sysconf("SC_PAGE_SIZE")


def resident_mb(pid):
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * PAGE / 2**20


def cpu_seconds(stat_path):
    fields = Path(stat_path).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def last_step(metrics):
    """The step of the last complete line of a metrics.jsonl that is being written."""
    try:
        with open(metrics, "rb") as file:
            file.seek(0, os.SEEK_END)
            file.seek(max(0, file.tell() - 65536))
            lines = file.read().split(b"\n")[:-1]
        return json.loads(lines[-1])["step"] if lines else 0
    except (OSError, ValueError, KeyError, IndexError):
        return 0


def watch(process, metrics_of, total):
    """Samples (seconds, step, resident MB, process CPU s, main thread CPU s) until the process ends."""
    samples, started = [], time.monotonic()
    while process.poll() is None:
        try:
            samples.append((time.monotonic() - started, last_step(metrics_of()), resident_mb(process.pid),
                            cpu_seconds(f"/proc/{process.pid}/stat"),
                            cpu_seconds(f"/proc/{process.pid}/task/{process.pid}/stat")))
        except (OSError, FileNotFoundError):
            break
        time.sleep(0.5)
    if process.wait() != 0:
        raise SystemExit(f"soak: the run exited {process.returncode}")
    return [s for s in samples if 0 < s[1] <= total and s[2] > 0]  # an exiting process reads 0 pages


def at_fraction(samples, fraction, total):
    return min(samples, key=lambda s: abs(s[1] - fraction * total))


def speed(samples, low, high, total):
    """Steps/s over the samples between fractions low and high of the run (at least three samples)."""
    window = [s for s in samples if low * total <= s[1] <= high * total]
    if len(window) < 3:
        window = samples[:3] if low == 0.0 else samples[-3:]
    return (window[-1][1] - window[0][1]) / max(window[-1][0] - window[0][0], 1e-9)


def report(name, samples, total, gui_share=None):
    first, middle, last = (at_fraction(samples, f, total)[2] for f in (0.01, 0.5, 1.0))
    start, end = speed(samples, 0.0, 0.05, total), speed(samples, 0.95, 1.0, total)
    growth = last / first - 1.0
    print(f"| {name} | {total} | {first:.1f} | {middle:.1f} | {last:.1f} | {100 * growth:+.1f}% | {start:.0f} | "
          f"{end:.0f} | {end / start:.2f} | {gui_share if gui_share is not None else '-'} |")
    return abs(growth) <= 0.10 and end / start >= 0.9


def cli_soak(cli, steps, scratch):
    folder = scratch / "cli"
    command = [cli, "train", "--preset", "quickstart", "--steps", str(steps), "--out", str(folder), "--quiet"]
    for key, value in TINY.items():
        command += ["--set", f"{key}={value}"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    return watch(process, lambda: folder / "metrics.jsonl", steps)


def window_soak(app, cli, steps, scratch):
    probe = scratch / "config"
    command = [cli, "train", "--preset", "quickstart", "--steps", "1", "--out", str(probe), "--quiet"]
    for key, value in TINY.items():
        command += ["--set", f"{key}={value}"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    config = json.loads((probe / "config.json").read_text())
    config["train"]["steps"] = steps
    runs = []
    for lr in (1e-3, 3e-3, 1e-2):
        run_config = json.loads(json.dumps(config))
        run_config["train"]["lr"] = lr
        runs.append({"name": f"lr {lr:g}", "visible": True, "config": run_config, "changes": []})
    experiment = scratch / "soak.json"
    experiment.write_text(json.dumps({"normlab_experiment": 1, "config": config, "runs": runs}))
    runs_dir = scratch / "window-runs"
    environment = dict(os.environ, QT_QPA_PLATFORM="offscreen", NORMLAB_RUNS_DIR=str(runs_dir))
    process = subprocess.Popen([app, "--experiment", str(experiment), "--autostart", "--quit-after-steps", str(steps)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)

    def first_metrics():
        folders = sorted(runs_dir.glob("*-0-*"))
        return folders[0] / "metrics.jsonl" if folders else runs_dir / "none"
    samples = watch(process, first_metrics, steps)
    share = samples[-1][4] / samples[-1][3] if samples and samples[-1][3] > 0 else float("nan")
    return samples, f"{100 * share:.0f}% of {samples[-1][3]:.0f} CPU s"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default="build/app/normlab-cli")
    parser.add_argument("--app", default="build/app/normlab", help="the window; '' to leave it out")
    parser.add_argument("--cli-steps", type=int, default=1_000_000)
    parser.add_argument("--window-steps", type=int, default=100_000)
    args = parser.parse_args()
    print(f"soak: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
    print("| run | steps | RSS MB at 1% | at 50% | at 100% | growth | steps/s first 5% | last 5% | end/start | "
          "GUI thread CPU |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ok = True
    with tempfile.TemporaryDirectory(prefix="normlab_soak_") as scratch_name:
        scratch = Path(scratch_name)
        if args.cli_steps:
            ok &= report("normlab-cli train, tiny", cli_soak(args.cli, args.cli_steps, scratch), args.cli_steps)
        if args.app and args.window_steps:
            samples, share = window_soak(args.app, args.cli, args.window_steps, scratch)
            ok &= report("window, 3 runs (first run's steps)", samples, args.window_steps, share)
    print(f"soak: load average {os.getloadavg()[0]:.1f} at the end; " + ("flat and steady" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
