#!/usr/bin/env python3
"""Benchmark: how fast the window opens large run folders, and how much memory it keeps.
Writes (once, reused) a 100k-step folder of the 48-block `deep-postln` preset and 20 folders of 10k
steps, from real lines that `normlab-cli train` writes, then times `normlab --open ... --screenshot`
(charts drawn once every folder is read) and reports wall time and peak resident memory as a table;
and a library of 1000 run folders listed by `normlab-cli runs` (the run library panel's reading code:
config.json and summary.json of each)."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

STEP_FIELD = re.compile(rb'"step":\d+')


def template_folder(cli, work):
    """A real deep-postln run of 20 steps: per-block lines every 5 steps, plain lines between."""
    folder = os.path.join(work, "template")
    if not os.path.exists(os.path.join(folder, "summary.json")):
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run([cli, "train", "--preset", "deep-postln", "--steps", "20", "--out", folder],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return folder


def write_run(template, folder, steps):
    """A folder of `steps` steps: the template's lines in turn with their step renumbered."""
    done = os.path.join(folder, ".complete")
    if os.path.exists(done):
        return
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(template, "metrics.jsonl"), "rb") as f:
        lines = f.read().splitlines()
    with open(os.path.join(folder, "metrics.jsonl"), "wb") as out:
        for step in range(1, steps + 1):
            line = STEP_FIELD.sub(b'"step":%d' % step, lines[(step - 1) % len(lines)], count=1)
            out.write(line + b"\n")
    for name in ("config.json", "events.jsonl", "provenance.json"):
        shutil.copy(os.path.join(template, name), folder)
    with open(os.path.join(template, "summary.json")) as f:
        summary = f.read()
    summary = re.sub(r'"steps":\s*\d+', '"steps": %d' % steps, summary)
    with open(os.path.join(folder, "summary.json"), "w") as f:
        f.write(summary)
    open(done, "w").close()


def write_library(template, root, count):
    """`count` finished run folders holding config.json and summary.json only (what a listing reads)."""
    if os.path.exists(os.path.join(root, ".complete")):
        return
    for i in range(count):
        folder = os.path.join(root, "run%04d" % i)
        os.makedirs(folder, exist_ok=True)
        for name in ("config.json", "summary.json"):
            shutil.copy(os.path.join(template, name), folder)
    open(os.path.join(root, ".complete"), "w").close()


def time_listing(cli, root, repeats):
    walls = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([cli, "runs", root], check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls)


def folder_bytes(folders):
    return sum(os.path.getsize(os.path.join(f, "metrics.jsonl")) for f in folders)


def time_open(app, folders, shot):
    """Wall seconds and peak resident MB of opening `folders` until the screenshot is saved."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    cmd = ["/usr/bin/time", "-f", "%e %M", app, "--open", *folders, "--screenshot", shot]
    result = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit("normlab --open failed:\n" + result.stderr)
    wall, kb = result.stderr.strip().splitlines()[-1].split()
    return float(wall), int(kb) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", default="build", help="build folder with app/normlab and app/normlab-cli")
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "normlab-bench-open"),
                        help="where the generated folders are kept (reused between runs)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--big-steps", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--run-steps", type=int, default=10_000)
    parser.add_argument("--library", type=int, default=1000, help="run folders in the listing case")
    args = parser.parse_args()
    app = os.path.join(args.build, "app", "normlab")
    cli = os.path.join(args.build, "app", "normlab-cli")
    os.makedirs(args.work, exist_ok=True)
    template = template_folder(cli, args.work)
    big = os.path.join(args.work, "big-%d" % args.big_steps)
    write_run(template, big, args.big_steps)
    many = [os.path.join(args.work, "runs-%d" % args.run_steps, "run%02d" % i) for i in range(args.runs)]
    for folder in many:
        write_run(template, folder, args.run_steps)
    cases = [("1 run x %d steps" % args.big_steps, [big]),
             ("%d runs x %d steps" % (args.runs, args.run_steps), many)]
    load = os.getloadavg()[0]
    print("machine: %d cores, load average %.2f before the runs" % (os.cpu_count(), load))
    print("| case | metrics.jsonl MB | open to charts, s (median of %d) | peak resident MB |" % args.repeats)
    print("|---|---:|---:|---:|")
    for name, folders in cases:
        walls, mems = [], []
        for _ in range(args.repeats):
            wall, mem = time_open(app, folders, os.path.join(args.work, "shot.png"))
            walls.append(wall)
            mems.append(mem)
        print("| %s | %.0f | %.2f | %.0f |" % (name, folder_bytes(folders) / 1e6, statistics.median(walls),
                                               max(mems)))
    library = os.path.join(args.work, "library-%d" % args.library)
    write_library(template, library, args.library)
    print("\nlisting %d run folders (normlab-cli runs): %.2f s (median of %d)"
          % (args.library, time_listing(cli, library, args.repeats), args.repeats))


if __name__ == "__main__":
    main()
