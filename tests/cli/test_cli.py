#!/usr/bin/env python3
"""normlab-cli as a user meets it: every subcommand's --help, a full train / resume / eval cycle, the
run-folder contract, and bad input, which must give exit code 2, a message naming the problem, and no
run folder that looks valid. Standard library only."""
import argparse
import csv
import json
import math
import re
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

CLI = None
TINY = ["--set", "model.d_model=16", "--set", "model.heads=2", "--set", "model.d_ff=32", "--set", "model.layers=2",
        "--set", "model.seq_len=16", "--set", "train.batch_size=4", "--set", "telemetry.val_every=10"]


def run(*args, check_rc=None):
    result = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)
    if check_rc is not None and result.returncode != check_rc:
        raise AssertionError(f"normlab-cli {' '.join(args)} exited {result.returncode}, wanted {check_rc}\n"
                             f"stdout: {result.stdout}\nstderr: {result.stderr}")
    return result


def safetensors_metadata(path):
    """The __metadata__ of a safetensors file's header (8-byte little-endian length, then JSON)."""
    data = Path(path).read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + length]).get("__metadata__", {})


def run_with_file_size_limit(limit_bytes, *args):
    """Runs normlab-cli where no file may grow past limit_bytes (writes fail like on a full disk)."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600, preexec_fn=limit)


class CliTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="normlab_cli_"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def expect_bad_input(self, args, *fragments, out=None):
        result = run(*args)
        self.assertEqual(result.returncode, 2, f"{args}: {result.stderr}")
        for fragment in fragments:
            self.assertIn(fragment, result.stderr, f"{args}: message lacks '{fragment}'")
        if out is not None:
            self.assertFalse((Path(out) / "summary.json").exists(), f"{args}: a run folder was left behind")
        return result.stderr


# Every normlab-cli command (normlab-cli --help lists them).
COMMANDS = ("train", "eval", "bench", "probe", "presets", "dump-grads", "runs", "compare", "export", "sweep",
            "selftest")


class HelpAndPresets(CliTestCase):
    def test_every_subcommand_has_help(self):
        for command in COMMANDS:
            result = run(command, "--help", check_rc=0)
            self.assertIn("usage: normlab-cli " + command, result.stdout)
        listed = run("--help", check_rc=0).stdout.split("commands:", 1)[1]
        self.assertEqual(sorted(line.split()[0] for line in listed.strip().splitlines()), sorted(COMMANDS))

    def test_unknown_command_and_option(self):
        self.assertEqual(run("frobnicate").returncode, 2)
        self.expect_bad_input(["train", "--out", str(self.tmp / "r"), "--bogus"], "unknown option '--bogus'")

    def test_config_doc_lists_exactly_the_engine_keys(self):
        # docs/config.md's table and the engine's key table (as train --help prints it) cannot drift.
        help_text = run("train", "--help", check_rc=0).stdout
        keys_part = help_text[help_text.index("config keys"):].split(":", 1)[1]
        engine_keys = keys_part.split()
        doc = (Path(__file__).resolve().parents[2] / "docs" / "config.md").read_text()
        documented = re.findall(r"^\| `([a-z_.0-9]+)` \|", doc, flags=re.M)
        self.assertEqual(documented, engine_keys)

    def test_cli_doc_names_every_option_of_every_command(self):
        # docs/cli.md's section of each command (or its shared "Choosing the config" table) names every
        # option the command's --help lists, so the two cannot drift.
        doc = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
        sections = dict(re.findall(r"^## (\S+)[^\n]*\n(.*?)(?=^## |\Z)", doc, flags=re.M | re.S))
        shared = sections["Choosing"]
        for command in COMMANDS:
            options = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", run(command, "--help", check_rc=0).stdout))
            for option in sorted(options - {"--help"}):
                self.assertTrue(option in sections[command] or option in shared,
                                f"docs/cli.md's '{command}' section does not name {option}")

    def test_presets_lists_the_required_names(self):
        lines = run("presets", check_rc=0).stdout.splitlines()
        names = [line.split()[0] for line in lines]
        for required in ("postln-no-warmup", "postln-warmup", "preln-no-warmup", "deep-postln", "deep-deepnorm",
                         "deep-rezero", "periln", "theory-postln", "theory-preln", "gpt2-shape", "llama-small"):
            self.assertIn(required, names)
        self.assertTrue(all(len(line.split(None, 1)) == 2 for line in lines), "every preset has a description")


class RunsTable(CliTestCase):
    def test_runs_lists_each_run_and_the_keys_that_differ(self):
        runs = self.tmp / "runs"
        for name, lr in (("slow", "0.001"), ("fast", "0.003")):
            run("train", *TINY, "--steps", "12", "--set", f"train.lr={lr}", "--out", str(runs / name), "--quiet",
                check_rc=0)
        listed = json.loads(run("runs", str(runs), "--json", check_rc=0).stdout)
        self.assertEqual([Path(row["folder"]).name for row in listed], ["fast", "slow"])
        for row in listed:
            summary = json.loads((Path(row["folder"]) / "summary.json").read_text())
            self.assertEqual(row["status"], "completed")
            self.assertEqual(row["steps"], 12)
            self.assertEqual(row["final_loss"], summary["final_loss"])
            self.assertEqual(row["final_val_loss"], summary["final_val_loss"])
        self.assertEqual([row["differs"] for row in listed], [{"train.lr": "0.003"}, {"train.lr": "0.001"}])
        table = run("runs", str(runs / "slow"), str(runs / "fast"), check_rc=0).stdout.splitlines()
        self.assertTrue(table[0].startswith("folder"))
        self.assertIn("train.lr=0.001", table[1])
        self.assertIn("train.lr=0.003", table[2])

    def test_runs_shows_a_quiet_running_run_as_stale_and_the_bridges_own_keys(self):
        runs = self.tmp / "runs"
        for name, lr, world in (("a", 0.001, 1), ("b", 0.003, 2)):
            folder = runs / name
            folder.mkdir(parents=True)
            (folder / "config.json").write_text(json.dumps({
                "source": "normlab-torch", "model": {"layers": 2, "d_model": 8, "heads": 2},
                "torch": {"world_size": world}, "user": {"lr": lr, "norm": "rms"}}))
            (folder / "summary.json").write_text(json.dumps({"status": "running", "steps": 5}))
        old = time.time() - 3600
        os.utime(runs / "a" / "summary.json", (old, old))  # its writer went quiet an hour ago
        listed = {Path(row["folder"]).name: row for row in json.loads(run("runs", str(runs), "--json",
                                                                           check_rc=0).stdout)}
        self.assertEqual(listed["a"]["status"], "stale")
        self.assertEqual(listed["b"]["status"], "running")
        self.assertEqual(listed["a"]["differs"], {"user.lr": "0.001", "world_size": "1"})
        self.assertEqual(listed["b"]["differs"], {"user.lr": "0.003", "world_size": "2"})
        table = run("runs", str(runs), check_rc=0).stdout
        self.assertIn("stale", table)
        self.assertIn("user.lr=0.003 world_size=2", table)

    def test_runs_refuses_what_is_not_a_run(self):
        self.expect_bad_input(["runs", str(self.tmp / "missing")], "does not exist")
        (self.tmp / "empty").mkdir()
        self.expect_bad_input(["runs", str(self.tmp / "empty")], "holds no run folder")
        self.expect_bad_input(["runs"], "name at least one folder")


class Export(CliTestCase):
    def train_two(self):
        runs = self.tmp / "runs"
        for name, placement in (("post", "post"), ("pre", "pre")):
            run("train", *TINY, "--steps", "12", "--set", f"model.norm_placement={placement}", "--out",
                str(runs / name), "--quiet", check_rc=0)
        return runs

    def test_metrics_table_holds_every_logged_value(self):
        runs = self.train_two()
        out = self.tmp / "metrics.csv"
        run("export", "--run", str(runs), "--metrics", "--format", "csv", "--out", str(out), check_rc=0)
        rows = list(csv.DictReader(out.read_text().splitlines()))
        expected = 0
        for name in ("post", "pre"):
            metrics = [json.loads(line) for line in (runs / name / "metrics.jsonl").read_text().splitlines()]
            expected += len(metrics) + sum(len(m.get("layers", [])) for m in metrics)
            for m in metrics:
                [step_row] = [r for r in rows if r["run"] == name and r["step"] == str(m["step"]) and r["block"] == "-1"]
                self.assertEqual(float(step_row["loss"]), m["loss"])
                for block, layer in enumerate(m.get("layers", [])):
                    [block_row] = [r for r in rows if r["run"] == name and r["step"] == str(m["step"])
                                   and r["block"] == str(block)]
                    self.assertEqual(float(block_row["resid"]), layer["resid"])
                    self.assertEqual(float(block_row["grad.w_2"]), layer["grad"]["w_2"])
        self.assertEqual(len(rows), expected)
        # Parquet: NormLab's own writer (pyarrow reads it back in python/tests/test_parquet.py).
        parquet = self.tmp / "m.parquet"
        run("export", "--run", str(runs), "--metrics", "--format", "parquet", "--out", str(parquet), check_rc=0)
        data = parquet.read_bytes()
        self.assertEqual((data[:4], data[-4:]), (b"PAR1", b"PAR1"))
        self.assertLess(int.from_bytes(data[-8:-4], "little"), len(data) - 12)  # the footer's length
        self.expect_bad_input(["export", "--run", str(runs), "--metrics", "--format", "xlsx", "--out",
                               str(self.tmp / "m.xlsx")], "--format csv or --format parquet")
        self.expect_bad_input(["export", "--run", str(runs), "--metrics", "--format", "parquet", "--out",
                               str(self.tmp / "m.csv")], "must end in .parquet")

    def test_figures_are_the_windows_drawn_offscreen(self):
        runs = self.train_two()
        if not (Path(CLI).parent / "normlab").exists():
            # A build without the desktop app says so (exit 2) instead of drawing nothing.
            self.expect_bad_input(["export", "--run", str(runs), "--chart", "loss", "--format", "png", "--out",
                                   str(self.tmp / "x.png")], "desktop app")
            return
        env_free = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
        listed = subprocess.run([CLI, "export", "--list"], capture_output=True, text=True, env=env_free, timeout=60)
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assertIn("loss", [line.split()[0] for line in listed.stdout.splitlines()])
        png = self.tmp / "loss.png"
        drawn = subprocess.run([CLI, "export", "--run", str(runs), "--chart", "loss", "--format", "png", "--out",
                                str(png), "--size", "1200x800", "--dpi", "150"], capture_output=True, text=True,
                               env=env_free, timeout=120)
        self.assertEqual(drawn.returncode, 0, drawn.stderr)
        header = png.read_bytes()[:24]
        self.assertEqual(header[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(struct.unpack(">II", header[16:24]), (1200, 800))
        svg = self.tmp / "dash.svg"
        run("export", "--run", str(runs), "--dashboard", "--format", "svg", "--out", str(svg), check_rc=0)
        text = svg.read_text()
        for title in ("Loss and learning rate", "Gradient norm per block", "Differs: post model.norm_placement=post"):
            self.assertIn(title, text)
        data = self.tmp / "loss.csv"
        run("export", "--run", str(runs / "pre"), "--chart", "loss", "--format", "csv", "--out", str(data), check_rc=0)
        metrics = [json.loads(line) for line in (runs / "pre" / "metrics.jsonl").read_text().splitlines()]
        train = {int(float(r.split(",")[2])): float(r.split(",")[3]) for r in data.read_text().splitlines()
                 if r.startswith("train,")}
        self.assertEqual(train, {m["step"]: m["loss"] for m in metrics})
        self.expect_bad_input(["export", "--run", str(runs), "--chart", "nosuch", "--format", "png", "--out",
                               str(self.tmp / "n.png")], "unknown chart 'nosuch'")
        self.expect_bad_input(["export", "--run", str(runs), "--chart", "loss", "--format", "png", "--out",
                               str(self.tmp / "n.svg")], "must end in .png")
        # --steps A:B: the chart's CSV keeps only those steps, and says so.
        ranged = self.tmp / "loss-4-9.csv"
        run("export", "--run", str(runs / "pre"), "--chart", "loss", "--format", "csv", "--out", str(ranged),
            "--steps", "4:9", check_rc=0)
        text = ranged.read_text()
        steps = {int(float(r.split(",")[2])) for r in text.splitlines() if r.startswith("train,")}
        self.assertEqual(steps, set(range(4, 10)))
        self.assertIn("steps 4 to 9", text)

    def test_slide_preset_labels_and_caption(self):
        # --preset slide: 1920x1080, a one-line caption, the user's run labels in legend and caption, and
        # SVG fonts that name their generic family; a label for no run, or an unknown preset, exits 2.
        runs = self.train_two()
        if not (Path(CLI).parent / "normlab").exists():
            return  # a build without the desktop app: test_figures_are_the_windows_drawn_offscreen covers it
        png = self.tmp / "slide.png"
        run("export", "--run", str(runs), "--chart", "loss", "--format", "png", "--preset", "slide", "--out",
            str(png), check_rc=0)
        self.assertEqual(struct.unpack(">II", png.read_bytes()[16:24]), (1920, 1080))
        svg = self.tmp / "slide.svg"
        run("export", "--run", str(runs), "--chart", "loss", "--format", "svg", "--preset", "slide",
            "--label", "post=Post-LN, no warmup", "--label", "pre=Pre-LN", "--out", str(svg), check_rc=0)
        text = svg.read_text()
        self.assertIn("Post-LN, no warmup", text)
        self.assertIn("Differs: Post-LN, no warmup model.norm_placement=post", text)
        self.assertNotIn("post: Post-LN", text)  # one line of caption only
        families = set(re.findall(r'font-family="([^"]*)"', text))
        self.assertTrue(families and all(f.endswith(", sans-serif") for f in families), families)
        bare = self.tmp / "bare.svg"
        run("export", "--run", str(runs), "--chart", "loss", "--format", "svg", "--preset", "slide",
            "--no-caption", "--out", str(bare), check_rc=0)
        self.assertNotIn("Differs:", bare.read_text())
        self.expect_bad_input(["export", "--run", str(runs), "--chart", "loss", "--format", "png", "--label",
                               "nosuch=X", "--out", str(self.tmp / "x.png")], "no run is named 'nosuch'")
        self.assertFalse((self.tmp / "x.png").exists())
        self.expect_bad_input(["export", "--run", str(runs), "--chart", "loss", "--format", "png", "--preset",
                               "poster", "--out", str(self.tmp / "y.png")], "presets: slide")

    def test_metrics_steps_range_and_bad_ranges(self):
        runs = self.train_two()
        out = self.tmp / "ranged.csv"
        run("export", "--run", str(runs / "post"), "--metrics", "--format", "csv", "--out", str(out),
            "--steps", "5:", check_rc=0)
        steps = {int(r["step"]) for r in csv.DictReader(out.read_text().splitlines())}
        self.assertEqual(steps, set(range(5, 13)))
        for bad in ("9:4", "a:b", "5", "-1:3"):
            self.expect_bad_input(["export", "--run", str(runs), "--metrics", "--format", "csv", "--out",
                                   str(self.tmp / "x.csv"), "--steps", bad], "FIRST:LAST")

    def test_window_watches_a_run_while_the_cli_writes_it(self):
        # `normlab --open DIR --quit-after-steps N` waits for the watched run, not for training of its own.
        app = Path(CLI).parent / "normlab"
        if not app.exists():
            self.skipTest("built without the desktop app (-DNORMLAB_GUI=OFF)")
        folder = self.tmp / "live"
        writer = subprocess.Popen([CLI, "train", *TINY, "--steps", "100000", "--out", str(folder), "--quiet"])
        try:
            for _ in range(200):
                if (folder / "summary.json").exists():
                    break
                time.sleep(0.05)
            shot = self.tmp / "watch.png"
            env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
            watched = subprocess.run([str(app), "--open", str(folder), "--quit-after-steps", "300",
                                      "--screenshot", str(shot)], capture_output=True, text=True, env=env,
                                     timeout=120)
        finally:
            writer.kill()
            writer.wait()
        self.assertEqual(watched.returncode, 0, watched.stderr)
        reached = re.search(r"live: step (\d+) \(target 300\), opened, running", watched.stdout)
        self.assertIsNotNone(reached, watched.stdout)
        self.assertGreaterEqual(int(reached.group(1)), 300)
        self.assertEqual(shot.read_bytes()[:8], b"\x89PNG\r\n\x1a\n")


class Sweep(CliTestCase):
    AXES = ["--axis", "train.lr=1e-3,1e-2,1", "--axis", "model.norm_placement=post,pre"]

    def plan(self, folder, *extra, steps=30):
        run("sweep", "plan", "--preset", "quickstart", *TINY, *self.AXES, "--seeds", "2", "--steps", str(steps),
            "--out", str(folder), *extra, check_rc=0)
        return json.loads((folder / "sweep.json").read_text())

    def states(self, folder):
        status = json.loads(run("sweep", "status", str(folder), "--json", check_rc=0).stdout)
        return {p["id"]: p["state"] for p in status["points"]}

    def test_planning_is_deterministic_and_a_file_equals_the_flags(self):
        a, b = self.plan(self.tmp / "a"), self.plan(self.tmp / "b")
        self.assertEqual(a, b)
        self.assertEqual(len(a["points"]), 12)
        self.assertEqual([p["index"] for p in a["points"]], list(range(12)))
        self.assertEqual(len({p["id"] for p in a["points"]}), 12)
        # The first axis varies slowest, seeds fastest.
        self.assertEqual([(p["set"]["train.lr"], p["set"]["model.norm_placement"], p["seed"]) for p in a["points"][:4]],
                         [(0.001, "post", 1), (0.001, "post", 2), (0.001, "pre", 1), (0.001, "pre", 2)])
        sweep_file = self.tmp / "grid.json"
        sweep_file.write_text(json.dumps(a["spec"]))
        run("sweep", "plan", str(sweep_file), "--out", str(self.tmp / "c"), check_rc=0)
        self.assertEqual(json.loads((self.tmp / "c" / "sweep.json").read_text())["points"], a["points"])
        # Planning the same again is fine; a different plan into the same folder is refused.
        self.plan(self.tmp / "a")
        self.expect_bad_input(["sweep", "plan", "--preset", "quickstart", "--axis", "train.lr=1,2", "--out",
                               str(self.tmp / "a")], "different sweep")
        self.expect_bad_input(["sweep", "plan", "--preset", "quickstart", "--axis", "model.layers=2,0", "--out",
                               str(self.tmp / "d")], "model.layers")
        self.expect_bad_input(["sweep", "plan", "--preset", "quickstart", "--axis", "train.lr", "--out",
                               str(self.tmp / "e")], "KEY=V1,V2")
        self.assertFalse((self.tmp / "d" / "sweep.json").exists())
        # A run's folder is not overlaid with a sweep: refused, the run's files as they were.
        trained = self.tmp / "trained"
        run("train", "--preset", "quickstart", *TINY, "--steps", "2", "--out", str(trained), check_rc=0)
        before = {f.name: f.read_bytes() for f in trained.iterdir() if f.is_file()}
        self.expect_bad_input(["sweep", "plan", "--preset", "quickstart", "--axis", "train.lr=1,2", "--out",
                               str(trained)], "holds a run (summary.json)", "folder of its own")
        self.assertEqual({f.name: f.read_bytes() for f in trained.iterdir() if f.is_file()}, before)

    def test_shards_partition_the_points(self):
        folder = self.tmp / "s"
        plan = self.plan(folder, steps=5)
        seen = {}
        for shard in range(3):
            run("sweep", "run", str(folder), "--shard", f"{shard}/3", "--quiet", check_rc=0)
            for point in plan["points"]:
                if (folder / "runs" / point["id"] / "summary.json").exists() and point["id"] not in seen:
                    seen[point["id"]] = shard
        self.assertEqual(seen, {p["id"]: p["index"] % 3 for p in plan["points"]})
        # Slurm's array variables choose the shard when --shard is not given.
        other = self.tmp / "slurm"
        self.plan(other, steps=5)
        env = dict(os.environ, SLURM_ARRAY_TASK_ID="5", SLURM_ARRAY_TASK_MIN="4", SLURM_ARRAY_TASK_COUNT="4")
        subprocess.run([CLI, "sweep", "run", str(other), "--quiet"], check=True, env=env, timeout=300)
        ran = sorted(p["index"] for p in plan["points"] if (other / "runs" / p["id"] / "summary.json").exists())
        self.assertEqual(ran, [1, 5, 9])
        self.expect_bad_input(["sweep", "run", str(folder), "--shard", "3/3"], "0 <= i < n")

    def test_a_killed_sweep_resumes_and_runs_each_point_once(self):
        folder = self.tmp / "k"
        plan = self.plan(folder, steps=400)
        worker = subprocess.Popen([CLI, "sweep", "run", str(folder), "--jobs", "1", "--quiet"], start_new_session=True)
        deadline = time.time() + 120
        done_before = {}
        while time.time() < deadline:
            done_before = {i: s for i, s in self.states(folder).items() if s in ("done", "diverged")}
            if len(done_before) >= 3:
                break
            time.sleep(0.05)
        os.killpg(worker.pid, signal.SIGKILL)  # the sweep and its running point, at once
        worker.wait()
        self.assertGreaterEqual(len(done_before), 3)
        self.assertLess(len(done_before), 12)
        finished = {i: (folder / "runs" / i / "metrics.jsonl").stat().st_mtime_ns for i in done_before}
        # The killed point's claim names a dead process: taken over at once, not after a minute.
        run("sweep", "run", str(folder), "--quiet", check_rc=0)
        states = self.states(folder)
        self.assertTrue(all(s in ("done", "diverged") for s in states.values()), states)
        for point_id, mtime in finished.items():
            self.assertEqual((folder / "runs" / point_id / "metrics.jsonl").stat().st_mtime_ns, mtime, point_id)
        for point in plan["points"]:
            steps = [json.loads(l)["step"] for l in (folder / "runs" / point["id"] / "metrics.jsonl").read_text().splitlines()]
            self.assertEqual(steps, list(range(1, len(steps) + 1)), point["id"])  # one run per folder, in order
        self.assertEqual(list((folder / "claims").glob("*.json")), [])

    def test_a_live_claim_keeps_other_workers_off(self):
        """A claim is live while its heartbeat counter moves, whatever its host's clock says; one whose
        counter stays still for the stale age (the observer's own clock) is taken over, and one whose
        process on this host is gone is taken over at once."""
        folder = self.tmp / "c"
        plan = self.plan(folder, steps=5)
        point = plan["points"][0]["id"]
        (folder / "claims").mkdir()
        token = "0123456789abcdef"
        beat = folder / "claims" / f"{point}.{token}.beat"
        env = dict(os.environ, NORMLAB_TEST_CLAIM_STALE_SECONDS="2")
        holder = subprocess.Popen(["sleep", "60"])
        beating = threading.Event()
        beating.set()

        def keep_beating():
            count = 0
            while beating.is_set():
                count += 1
                beat.write_text(f"{count}\n")
                time.sleep(0.1)
        thread = threading.Thread(target=keep_beating)
        try:
            # A heartbeat from a host whose clock is a day behind: only the counter's moves count.
            (folder / "claims" / f"{point}.json").write_text(json.dumps(
                {"host": os.uname().nodename, "pid": holder.pid, "token": token, "heartbeat": time.time() - 86400}))
            thread.start()
            result = subprocess.run([CLI, "sweep", "run-point", str(folder), "--point", point], capture_output=True,
                                    text=True, env=env, timeout=60)
            self.assertEqual(result.returncode, 3, result.stderr)
            self.assertIn("another worker", result.stderr)
            beating.clear()
            thread.join()
            # Its process lives on (stopped, say) but its heartbeat stands still: taken over after 2 s.
            started = time.monotonic()
            subprocess.run([CLI, "sweep", "run-point", str(folder), "--point", "0", "--quiet"], check=True, env=env,
                           timeout=60)
            self.assertGreaterEqual(time.monotonic() - started, 2.0)
        finally:
            beating.clear()
            if thread.is_alive():
                thread.join()
            holder.kill()
            holder.wait()
        self.assertEqual(self.states(folder)[point], "done")
        self.assertEqual(sorted(p.name for p in (folder / "claims").iterdir()), [])
        self.expect_bad_input(["sweep", "run-point", str(folder), "--point", "99"], "no point")

    def test_a_finished_point_s_dead_claim_is_released_by_the_next_run(self):
        """A worker killed between finishing a point and releasing its claim leaves the claim behind (seen
        once in a loaded test run): the next `sweep run` releases it, and a live worker's claim stays."""
        folder = self.tmp / "leftover"
        plan = self.plan(folder, steps=3)
        run("sweep", "run", str(folder), "--quiet", check_rc=0)
        dead = subprocess.Popen(["true"])
        dead.wait()
        alive = subprocess.Popen(["sleep", "60"])
        try:
            for point, pid in ((plan["points"][0]["id"], dead.pid), (plan["points"][1]["id"], alive.pid)):
                (folder / "claims" / f"{point}.json").write_text(json.dumps(
                    {"host": os.uname().nodename, "pid": pid, "token": "0123456789abcdef", "heartbeat": time.time()}))
            run("sweep", "run", str(folder), "--quiet", check_rc=0)
            self.assertEqual(sorted(p.name for p in (folder / "claims").iterdir()), [f"{plan['points'][1]['id']}.json"])
        finally:
            alive.kill()
            alive.wait()

    def test_the_map_exports_headless_and_opens_in_the_window(self):
        app = Path(CLI).parent / "normlab"
        if not app.exists():
            self.skipTest("built without the desktop app (-DNORMLAB_GUI=OFF)")
        folder = self.tmp / "m"
        self.plan(folder, steps=5)
        run("sweep", "run", str(folder), "--quiet", check_rc=0)
        grid = self.tmp / "map.csv"
        run("export", "--run", str(folder), "--chart", "stability_map", "--format", "csv", "--out", str(grid),
            check_rc=0)
        rows = [r for r in csv.DictReader(l for l in grid.read_text().splitlines() if not l.startswith("#"))]
        self.assertEqual(len(rows), 6)  # 3 lr x 2 placements, seeds pooled
        run("sweep", "collect", str(folder), check_rc=0)
        collected = list(csv.DictReader((folder / "points.csv").read_text().splitlines()))
        for row in rows:
            mine = [p for p in collected if p["train.lr"] == row["train.lr"]
                    and p["model.norm_placement"] == row["model.norm_placement"]]
            clamped = [float(p["initial_loss"]) if p["status"] == "diverged" else
                       min(float(p["final_val_loss"] or p["final_loss"]), float(p["initial_loss"])) for p in mine]
            self.assertAlmostEqual(float(row["value"]), sum(clamped) / len(clamped), places=9)
        png = self.tmp / "map.png"
        run("export", "--run", str(folder), "--chart", "stability_map", "--format", "png", "--out", str(png),
            "--size", "1400x1000", check_rc=0)
        self.assertEqual(struct.unpack(">II", png.read_bytes()[16:24]), (1400, 1000))
        listed = json.loads(run("runs", str(folder), "--json", check_rc=0).stdout)
        self.assertEqual(len(listed), 12)  # a sweep folder stands for its points' runs
        metrics = self.tmp / "all.csv"
        run("export", "--run", str(folder), "--metrics", "--format", "csv", "--out", str(metrics), check_rc=0)
        self.assertEqual({r["run"] for r in csv.DictReader(metrics.read_text().splitlines())},
                         {p["id"] for p in collected})
        shot = self.tmp / "window.png"
        opened = subprocess.run([str(app), "--open", str(folder), "--screenshot", str(shot)], capture_output=True,
                                text=True, env=dict(os.environ, QT_QPA_PLATFORM="offscreen"), timeout=120)
        self.assertEqual(opened.returncode, 0, opened.stderr)
        self.assertEqual(shot.read_bytes()[:8], b"\x89PNG\r\n\x1a\n")

    def reduced_shipped_map(self, name, **changes):
        """Plans, runs and collects the shipped sweep `name` with some entries replaced (reduced scale);
        returns collect's points.csv rows and lr_sensitivity.csv rows."""
        shipped = json.loads((Path(__file__).resolve().parents[2] / "resources" / "sweeps" / f"{name}.json").read_text())
        sweep_file = self.tmp / f"{name}.json"
        sweep_file.write_text(json.dumps(dict(shipped, **changes)))
        folder = self.tmp / name
        run("sweep", "plan", str(sweep_file), "--out", str(folder), check_rc=0)
        run("sweep", "run", str(folder), "--quiet", check_rc=0)
        run("sweep", "collect", str(folder), check_rc=0)
        points = list(csv.DictReader((folder / "points.csv").read_text().splitlines()))
        sensitivity = folder / "lr_sensitivity.csv"
        return points, list(csv.DictReader(sensitivity.read_text().splitlines())) if sensitivity.exists() else []

    def test_the_shipped_warmup_map_headline_holds_across_seeds(self):
        # One high lr, the extreme warmups, two seeds: Post-LN without warmup stalls near the unigram
        # loss, 500 warmup steps rescue it, and Pre-LN trains without any warmup.
        points, _ = self.reduced_shipped_map("warmup-map", axes={"train.lr": [5e-3], "train.warmup_steps": [0, 500]},
                                             seeds=2)
        loss = {(p["model.norm_placement"], p["train.warmup_steps"], p["seed"]): float(p["final_val_loss"])
                for p in points if p["status"] == "done"}
        self.assertEqual(len(loss), 8, points)
        for seed in ("1", "2"):
            self.assertGreater(loss[("Post-LN", "0", seed)], 2.8, loss)   # stuck (unigram loss ~3.1)
            self.assertLess(loss[("Post-LN", "500", seed)], 2.3, loss)    # warmup rescues it
            self.assertLess(loss[("Pre-LN", "0", seed)], 2.0, loss)       # no warmup needed

    def test_the_shipped_depth_map_headline_holds_across_seeds(self):
        # 12 blocks instead of up to 48, two seeds: Post-LN stalls while DeepNorm and Pre-LN train.
        points, _ = self.reduced_shipped_map("depth-map", axes={"model.layers": [12]}, seeds=2,
                                             linked=[{"model.norm_placement": ["post", "pre", "post"],
                                                      "model.residual": ["plain", "plain", "deepnorm"],
                                                      "label": ["Post-LN", "Pre-LN", "DeepNorm"]}])
        loss = {(p["model.norm_placement+model.residual"], p["seed"]): float(p["final_val_loss"])
                for p in points if p["status"] == "done"}
        self.assertEqual(len(loss), 6, points)
        for seed in ("1", "2"):
            self.assertGreater(loss[("Post-LN", seed)], 2.8, loss)
            self.assertLess(loss[("Pre-LN", seed)], 2.2, loss)
            self.assertLess(loss[("DeepNorm", seed)], 2.2, loss)

    def test_the_shipped_lr_sensitivity_headline_holds_across_seeds(self):
        # Three of its learning rates (1e-3, 1e-2, 1e-1), two seeds: Pre-LN is less sensitive.
        points, _ = self.reduced_shipped_map("lr-sensitivity", axes={"train.lr": [1e-3, 1e-2, 1e-1]}, seeds=2)
        for seed in ("1", "2"):
            value = {}
            for placement in ("Post-LN", "Pre-LN"):
                mine = [p for p in points if p["seed"] == seed and p["model.norm_placement"] == placement]
                clamped = [float(p["initial_loss"]) if p["status"] == "diverged" else
                           min(float(p["final_val_loss"]), float(p["initial_loss"])) for p in mine]
                self.assertEqual(len(clamped), 3, mine)
                value[placement] = sum(clamped) / 3 - min(clamped)
            self.assertLess(value["Pre-LN"] + 0.2, value["Post-LN"], (seed, value))

    def test_collect_matches_a_hand_computed_case(self):
        # Final and initial losses written by hand: lr sensitivity = mean over lr of min(final, initial),
        # seeds averaged first, minus the best; a diverged point counts as its initial loss.
        folder = self.tmp / "h"
        plan = self.plan(folder)
        finals = {(0.001, "post"): [4.0, 4.2], (0.01, "post"): [3.0, 3.2], (1, "post"): [None, None],
                  (0.001, "pre"): [4.1, 4.1], (0.01, "pre"): [2.9, 3.1], (1, "pre"): [6.0, 3.5]}
        initial = 5.5
        for point in plan["points"]:
            run_dir = folder / "runs" / point["id"]
            run_dir.mkdir(parents=True)
            final = finals[(point["set"]["train.lr"], point["set"]["model.norm_placement"])][point["seed"] - 1]
            (run_dir / "config.json").write_text("{}")
            (run_dir / "metrics.jsonl").write_text(json.dumps({"step": 1, "loss": initial}) + "\n")
            (run_dir / "summary.json").write_text(json.dumps(
                {"status": "diverged" if final is None else "completed", "steps": 30, "final_loss": final,
                 "final_val_loss": final, "diverged_at": 3 if final is None else None, "wall_seconds": 1.5}))
        result = run("sweep", "collect", str(folder), check_rc=0)
        rows = {r["model.norm_placement"]: r for r in csv.DictReader((folder / "lr_sensitivity.csv").read_text().splitlines())}
        post = [4.1, 3.1, 5.5]          # seed means, the diverged lr at the initial loss
        pre = [4.1, 3.0, (5.5 + 3.5) / 2]  # 6.0 clamps to the initial 5.5
        for name, values in (("post", post), ("pre", pre)):
            self.assertAlmostEqual(float(rows[name]["lr_sensitivity"]), sum(values) / 3 - min(values), places=12)
            self.assertAlmostEqual(float(rows[name]["best_loss"]), min(values), places=12)
        self.assertIn("lr sensitivity", result.stdout)
        points = list(csv.DictReader((folder / "points.csv").read_text().splitlines()))
        self.assertEqual(len(points), 12)
        diverged = [p for p in points if p["status"] == "diverged"]
        self.assertEqual({p["train.lr"] for p in diverged}, {"1"})
        self.assertEqual({p["diverged_at"] for p in diverged}, {"3"})


class TrainResumeEval(CliTestCase):
    def read_metrics(self, folder):
        return [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]

    def test_run_folder_contract(self):
        out = self.tmp / "run"
        run("train", "--preset", "quickstart", *TINY, "--steps", "20", "--out", str(out), "--save-checkpoint",
            "--change", "10:model.norm_placement=post", "--quiet", check_rc=0)
        config = json.loads((out / "config.json").read_text())
        self.assertEqual(config["model"]["d_model"], 16)
        metrics = self.read_metrics(out)
        self.assertEqual([m["step"] for m in metrics], list(range(1, 21)))
        layer = metrics[0]["layers"][0]
        for key in ("resid", "update_ratio", "attn_entropy", "attn_max_logit"):
            self.assertGreater(layer[key], 0.0, key)
        self.assertEqual(set(layer["grad"]) >= {"w_qkv", "w_o", "w_1", "w_2"}, True)
        self.assertEqual(len(metrics[0]["layers"]), 2)
        self.assertIn("val_loss", metrics[9])
        events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
        self.assertEqual([(e["step"], e["key"], e["value"]) for e in events if e["kind"] == "change"],
                         [(10, "model.norm_placement", "post")])
        summary = json.loads((out / "summary.json").read_text())
        self.assertEqual(summary["status"], "completed")
        self.assertEqual(summary["steps"], 20)
        self.assertIsNone(summary["diverged_at"])
        self.assertAlmostEqual(summary["final_loss"], metrics[-1]["loss"], places=12)
        self.assertGreater(summary["steps_per_s"], 0)
        self.assertTrue((out / "model.safetensors").exists())
        # What reproduces it: version and commit as --version prints them, the threads used (not 0),
        # and the shipped corpus by path, size and an FNV-1a 64-bit hash computed here independently.
        provenance = json.loads((out / "provenance.json").read_text())
        version_line = run("--version", check_rc=0).stdout.splitlines()[0]
        self.assertIn(f"NormLab {provenance['normlab_version']} (commit {provenance['commit']})", version_line)
        self.assertGreaterEqual(provenance["threads"], 1)
        corpus = Path(provenance["corpus"]["path"])
        self.assertEqual(corpus.name, "corpus.txt")
        data = corpus.read_bytes()
        self.assertEqual(provenance["corpus"]["bytes"], len(data))
        fnv = 14695981039346656037
        for byte in data:
            fnv = ((fnv ^ byte) * 1099511628211) % (1 << 64)
        self.assertEqual(provenance["corpus"]["fnv1a64"], f"{fnv:016x}")
        self.assertIsNone(provenance["resumed_from"])

    def test_resume_continues_the_same_curve(self):
        straight, first, second = self.tmp / "straight", self.tmp / "first", self.tmp / "second"
        run("train", "--preset", "quickstart", *TINY, "--steps", "30", "--out", str(straight), "--quiet", check_rc=0)
        run("train", "--preset", "quickstart", *TINY, "--steps", "15", "--out", str(first), "--save-checkpoint",
            "--quiet", check_rc=0)
        run("train", "--resume", str(first / "model.safetensors"), "--steps", "30", "--out", str(second), "--quiet",
            check_rc=0)
        reference = {m["step"]: m["loss"] for m in self.read_metrics(straight)}
        resumed = self.read_metrics(second)
        provenance = json.loads((second / "provenance.json").read_text())
        self.assertEqual(provenance["resumed_from"], {"checkpoint": str(first / "model.safetensors"), "step": 15})
        self.assertEqual(resumed[0]["step"], 16)
        for record in resumed:
            self.assertEqual(record["loss"], reference[record["step"]], f"step {record['step']}")

    def test_resuming_in_place_keeps_the_history_and_the_checkpoint(self):
        """--resume D/model.safetensors --out D continues D: a kill soon after the start leaves steps 1-10 and
        the checkpoint (it used to delete both first), and the continued run retraces the straight one."""
        straight, folder = self.tmp / "straight", self.tmp / "run"
        run("train", "--preset", "quickstart", *TINY, "--steps", "20", "--out", str(straight), "--quiet", check_rc=0)
        run("train", "--preset", "quickstart", *TINY, "--steps", "10", "--out", str(folder), "--save-checkpoint",
            "--quiet", check_rc=0)
        checkpoint = folder / "model.safetensors"
        killed = subprocess.Popen([CLI, "train", "--resume", str(checkpoint), "--steps", "1000000", "--out", str(folder),
                                   "--overwrite", "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        killed.kill()
        killed.wait()
        self.assertEqual(safetensors_metadata(checkpoint)["normlab_step"], "10")
        self.assertEqual([m["step"] for m in self.read_metrics(folder)][:10], list(range(1, 11)))
        run("train", "--resume", str(checkpoint), "--steps", "20", "--out", str(folder), "--save-checkpoint", "--quiet",
            check_rc=0)
        reference = {m["step"]: m["loss"] for m in self.read_metrics(straight)}
        self.assertEqual([(m["step"], m["loss"]) for m in self.read_metrics(folder)], sorted(reference.items()))
        self.assertEqual(safetensors_metadata(checkpoint)["normlab_step"], "20")
        self.assertEqual(json.loads((folder / "summary.json").read_text())["checkpoint_step"], 20)

    def test_stale_temporaries_are_removed_when_a_folder_is_opened(self):
        """What a kill during a checkpoint or summary write leaves (40 MB each) goes on the next open."""
        folder = self.tmp / "run"
        run("train", "--preset", "quickstart", *TINY, "--steps", "5", "--out", str(folder), "--save-checkpoint",
            "--quiet", check_rc=0)
        stale = ["model.safetensors.tmp", "model.safetensors.4242.0.tmp", "summary.json.4242.1.tmp", "table.partial"]
        for name in stale:
            (folder / name).write_bytes(b"x" * 1000)
        run("train", "--resume", str(folder / "model.safetensors"), "--steps", "8", "--out", str(folder), "--quiet",
            check_rc=0)
        self.assertEqual([name for name in stale if (folder / name).exists()], [])
        self.assertEqual(sorted(p.name for p in folder.glob("*.tmp")), [])

    def test_periodic_checkpoints_hold_the_last_multiple_and_resume_the_same_curve(self):
        """train.checkpoint_every=10 over 25 steps: the folder's checkpoint holds step 20 (its metadata and
        summary.json's checkpoint_step say so), and a run resumed from it retraces steps 21-25 exactly."""
        straight, periodic, resumed = self.tmp / "straight", self.tmp / "periodic", self.tmp / "resumed"
        run("train", "--preset", "quickstart", *TINY, "--steps", "25", "--out", str(straight), "--quiet", check_rc=0)
        run("train", "--preset", "quickstart", *TINY, "--steps", "25", "--set", "train.checkpoint_every=10",
            "--out", str(periodic), "--quiet", check_rc=0)
        self.assertEqual(json.loads((periodic / "summary.json").read_text())["checkpoint_step"], 20)
        self.assertEqual(safetensors_metadata(periodic / "model.safetensors")["normlab_step"], "20")
        self.assertFalse((periodic / "model.safetensors.tmp").exists())
        run("train", "--resume", str(periodic / "model.safetensors"), "--steps", "25", "--out", str(resumed),
            "--quiet", check_rc=0)
        reference = {m["step"]: m["loss"] for m in self.read_metrics(straight)}
        self.assertEqual([(m["step"], m["loss"]) for m in self.read_metrics(resumed)],
                         [(step, reference[step]) for step in range(21, 26)])
        self.expect_bad_input(["train", "--preset", "quickstart", "--set", "train.checkpoint_every=-1",
                               "--out", str(self.tmp / "bad")], "train.checkpoint_every")

    def test_live_device_and_threads_changes(self):
        """--change threads=1 / device=cpu move the run to a new backend between steps and are recorded with
        its name; an impossible device=cuda is a rejected change and the run goes on."""
        no_gpu = run("train", "--preset", "quickstart", *TINY, "--set", "device=cuda", "--steps", "1",
                     "--out", str(self.tmp / "probe_cuda"), "--quiet").returncode == 2
        straight, switched = self.tmp / "straight", self.tmp / "switched"
        common = ["train", "--preset", "quickstart", *TINY, "--set", "threads=2", "--steps", "12", "--quiet"]
        run(*common, "--out", str(straight), check_rc=0)
        run(*common, "--out", str(switched), "--change", "5:threads=1", "--change", "8:device=cuda",
            "--change", "10:device=cpu", check_rc=0)
        events = [json.loads(line) for line in (switched / "events.jsonl").read_text().splitlines()]
        if no_gpu:
            self.assertEqual([(e["step"], e["kind"], e["key"], e["value"]) for e in events],
                             [(5, "change", "threads", "1"), (8, "rejected_change", "device", "cuda"),
                              (10, "change", "device", "cpu")])
            self.assertIn("device=cuda was asked for", events[1]["message"])
        self.assertIn("now on cpu (task pool + LIBXSMM GEMM, 1 thread)", events[0]["message"])
        self.assertEqual(events[-1]["message"],
                         "device = cpu: now on cpu (task pool + LIBXSMM GEMM, 1 thread) (cpu: asked for)")
        reference = self.read_metrics(straight)
        metrics = self.read_metrics(switched)
        self.assertEqual([m["step"] for m in metrics], list(range(1, 13)))
        for before, after in zip(reference, metrics):
            if after["step"] < 5:
                self.assertEqual(after["loss"], before["loss"], f"step {after['step']}")
            # 1 thread groups the reductions' partial sums differently: float rounding only
            self.assertAlmostEqual(after["loss"], before["loss"], delta=1e-6 * before["loss"])
        summary = json.loads((switched / "summary.json").read_text())
        self.assertEqual(summary["status"], "completed")
        self.assertEqual(summary["device"], "cpu: asked for")

    def test_eval_counts_every_predicted_position(self):
        out = self.tmp / "run"
        run("train", "--preset", "quickstart", *TINY, "--steps", "5", "--out", str(out), "--save-checkpoint",
            "--quiet", check_rc=0)
        tokens = self.tmp / "tokens.txt"
        text = b"The quick brown fox jumps over the lazy dog."
        tokens.write_text(" ".join(str(b) for b in text[:17]) + "\n\n" + ", ".join(str(b) for b in text[17:30]) + "\n")
        result = json.loads(run("eval", "--checkpoint", str(out / "model.safetensors"), "--tokens", str(tokens),
                                check_rc=0).stdout)
        self.assertEqual(result["tokens"], 16 + 12)
        self.assertTrue(math.log(256) - 1.5 < result["loss"] < math.log(256) + 1.5, result)

    def test_bench_prints_medians(self):
        result = run("bench", "--preset", "quickstart", *TINY, "--steps", "5", "--warmup", "1", check_rc=0)
        report = json.loads(result.stdout)
        for key in ("steps_per_s", "ms_per_step", "tokens_per_s", "gflops", "threads", "device", "backend"):
            self.assertIn(key, report)
        self.assertIn("LIBXSMM GEMM", report["backend"])  # which kernel ran (NORMLAB_GEMM=own: blocked GEMM)
        self.assertAlmostEqual(report["steps_per_s"] * report["ms_per_step"], 1000.0, places=6)
        self.assertAlmostEqual(report["tokens_per_s"], report["steps_per_s"] * 4 * 16, places=3)
        # the GPU's traffic and memory counters read 0 on the CPU, whose memory is the host's
        self.assertEqual((report["host_bytes_per_step"], report["peak_device_mb"]), (0.0, 0.0))
        self.assertNotIn("share_of_peak", report)

    def test_bench_peak_reports_the_share_of_a_measured_fma_peak(self):
        """--peak measures the CPU's FMA peak in the same run: a vector rate far above what the tiny model's
        steps reach (at least 4 FLOPs a cycle at 1 GHz on each thread), and share_of_peak is gflops over it."""
        for extra in ([], ["--gemm"]):
            report = json.loads(run("bench", "--preset", "quickstart", *TINY, "--steps", "3", "--warmup", "1",
                                    "--peak", *extra, check_rc=0).stdout)
            rate = report["gemm_gflops" if extra else "gflops"]
            self.assertIn(report["peak_instructions"], ("AVX-512", "AVX2 + FMA", "SSE"))
            self.assertGreater(report["peak_gflops"], 4.0 * report["threads"])
            self.assertAlmostEqual(report["share_of_peak"], rate / report["peak_gflops"], places=9)
            self.assertTrue(0.0 < report["share_of_peak"] < 1.0, report)
            self.assertIn("GEMM", report["backend"])
        self.expect_bad_input(["bench", "--preset", "quickstart", "--peak", "--set", "device=cuda"], "device")

    def test_probe_writes_figure_3_measures(self):
        out = self.tmp / "probe"
        run("probe", "--preset", "theory-postln", "--set", "model.layers=3", "--batches", "2", "--out", str(out),
            check_rc=0)
        probe = json.loads((out / "probe.json").read_text())
        self.assertEqual(probe["batches"], 2)
        self.assertEqual(len(probe["blocks"]), 3)
        for block in probe["blocks"]:
            self.assertTrue(1.0 < block["resid"] < 2.0, block["resid"])
            for weight in ("w_qkv", "w_1", "w_2"):
                grad = block["grad"][weight]
                self.assertLessEqual(grad["norm_of_mean"], grad["mean_norm"] * (1 + 1e-9))
            self.assertTrue(0.0 < block["dependency"]["ffn"] < 1.0)
            self.assertGreater(block["output_change"], 0.0)
        self.assertEqual(probe["config"]["model"]["theory_mode"], True)
        self.expect_bad_input(["probe", "--preset", "theory-postln", "--out", str(out)], "--batches")
        self.expect_bad_input(["probe", "--preset", "theory-postln", "--batches", "2", "--out", str(out)], "--overwrite")

    def test_probe_over_seeds_writes_the_mean_of_the_single_seed_probes(self):
        """--seeds 3 probes seeds train.seed .. train.seed + 2: every field is the mean of the three
        single-seed probes, per_seed holds each seed's w_2 profile, and stdout prints the profile's shape."""
        common = ["probe", "--preset", "theory-encdec-preln", "--set", "model.layers=3", "--set",
                  "model.encoder_layers=3", "--batches", "2"]
        singles = []
        for seed in (5, 6, 7):
            out = self.tmp / f"probe_seed{seed}"
            run(*common, "--set", f"train.seed={seed}", "--out", str(out), check_rc=0)
            singles.append(json.loads((out / "probe.json").read_text()))
            self.assertEqual(singles[-1]["seeds"], [seed])
        out = self.tmp / "probe_seeds"
        result = run(*common, "--set", "train.seed=5", "--seeds", "3", "--out", str(out), check_rc=0)
        mean = json.loads((out / "probe.json").read_text())
        self.assertEqual(mean["seeds"], [5, 6, 7])
        for b, block in enumerate(mean["blocks"]):
            for field in ("resid", "resid_cross", "output_change"):
                expected = sum(single["blocks"][b][field] for single in singles) / 3
                self.assertAlmostEqual(block[field], expected, delta=1e-12 * max(1.0, abs(expected)))
            for weight in ("w_2", "w_cross_kv"):
                for measure in ("mean_norm", "norm_of_mean"):
                    expected = sum(single["blocks"][b]["grad"][weight][measure] for single in singles) / 3
                    self.assertAlmostEqual(block["grad"][weight][measure], expected, delta=1e-12 * expected)
        expected_encoder = sum(single["encoder"][0]["resid"] for single in singles) / 3
        self.assertAlmostEqual(mean["encoder"][0]["resid"], expected_encoder, delta=1e-12)
        self.assertEqual([entry["seed"] for entry in mean["per_seed"]], [5, 6, 7])
        for entry, single in zip(mean["per_seed"], singles):
            profile = [block["grad"]["w_2"]["norm_of_mean"] for block in single["blocks"]]
            self.assertEqual(entry["w_2_norm_of_mean"], profile)
            self.assertAlmostEqual(entry["max_over_min"], max(profile) / min(profile), places=12)
            self.assertAlmostEqual(entry["last_over_first"], profile[-1] / profile[0], places=12)
        lines = result.stdout.strip().splitlines()
        self.assertEqual(lines[-1], str(out / "probe.json"))
        self.assertTrue(lines[-2].startswith("w_2 norm_of_mean per block, mean of the seeds: "), lines[-2])
        self.assertIn("max/min", lines[-2])
        self.assertEqual(sum(line.startswith("seed ") for line in lines), 3)
        self.expect_bad_input([*common, "--seeds", "0", "--out", str(self.tmp / "probe_none")], "--seeds")

    def test_probe_freeze_norms_on_a_checkpoint(self):
        """probe --freeze-norms: one entry per norm (2 blocks of Pre-LN: 4 + the final norm) whose loss_change
        is its loss minus the baseline, all at once, and with --finetune-steps a stage per norm and the
        control; a DyT checkpoint, a missing --checkpoint and a stray --finetune-lr are refused."""
        run("train", *TINY, "--steps", "40", "--out", str(self.tmp / "run"), "--save-checkpoint", "--quiet", check_rc=0)
        checkpoint = str(self.tmp / "run" / "model.safetensors")
        out = self.tmp / "frozen"
        result = run("probe", "--freeze-norms", "--checkpoint", checkpoint, "--batches", "2", "--finetune-steps", "3",
                     "--out", str(out), check_rc=0)
        self.assertEqual(result.stdout.strip().splitlines()[-1], str(out / "freeze_norms.json"))
        document = json.loads((out / "freeze_norms.json").read_text())
        names = [norm["name"] for norm in document["norms"]]
        self.assertEqual(names, ["blocks.0.norm1", "blocks.0.norm2", "blocks.1.norm1", "blocks.1.norm2", "final_norm"])
        for norm in document["norms"]:
            self.assertGreater(norm["mean_std"], 0.0)
            self.assertAlmostEqual(norm["loss_change"], norm["loss"] - document["baseline_loss"], places=12)
        self.assertAlmostEqual(document["all_at_once"]["loss_change"],
                               document["all_at_once"]["loss"] - document["baseline_loss"], places=12)
        finetune = document["finetune"]
        self.assertEqual(finetune["steps_per_norm"], 3)
        self.assertEqual(finetune["order"], "ffn-first")
        self.assertEqual([stage["name"] for stage in finetune["stages"]],
                         ["blocks.0.norm2", "blocks.1.norm2", "blocks.0.norm1", "blocks.1.norm1", "final_norm"])
        self.assertGreaterEqual(document["loss_change_cv_rank_correlation"], -1.0)
        self.assertLessEqual(document["loss_change_cv_rank_correlation"], 1.0)
        self.assertEqual(finetune["final_loss"], finetune["stages"][-1]["loss_after"])
        self.assertAlmostEqual(finetune["loss_change_vs_control"], finetune["final_loss"] - finetune["control_loss"],
                               places=12)
        self.assertIsNone(finetune["diverged_at"])
        self.expect_bad_input(["probe", "--freeze-norms", "--checkpoint", checkpoint, "--out", str(out)], "--overwrite")
        self.expect_bad_input(["probe", "--freeze-norms", "--out", str(out)], "--checkpoint")
        self.expect_bad_input(["probe", "--freeze-norms", "--checkpoint", checkpoint, "--finetune-steps", "2",
                               "--order", "backward", "--out", str(self.tmp / "order")], "ffn-first")
        self.expect_bad_input(["probe", "--freeze-norms", "--checkpoint", checkpoint, "--finetune-lr", "1e-3",
                               "--out", str(self.tmp / "lr")], "--finetune-steps")
        run("train", *TINY, "--set", "model.norm_type=dyt", "--steps", "2", "--out", str(self.tmp / "dyt"),
            "--save-checkpoint", "--quiet", check_rc=0)
        self.expect_bad_input(["probe", "--freeze-norms", "--checkpoint", str(self.tmp / "dyt" / "model.safetensors"),
                               "--out", str(self.tmp / "dyt_probe")], "dyt")

    def test_probe_coord_check_reads_each_width_as_a_run_of_it(self):
        """probe --coord-check: each width's sizes are that width's own training run's telemetry (a train run
        with the same keys gives the same per-block residual RMS at every step), the exponent is the log-log
        slope of the block means, and bad widths, too few widths and an existing file exit 2."""
        out = self.tmp / "coord"
        common = ["--preset", "quickstart", *TINY, "--set", "model.parametrization=mup", "--set", "train.lr=1e-2"]
        run("probe", "--coord-check", *common, "--widths", "16,32,64", "--steps", "3", "--out", str(out), check_rc=0)
        check = json.loads((out / "coord_check.json").read_text())
        self.assertEqual((check["widths"], check["steps"], check["seeds"], check["blocks"]), ([16, 32, 64], 3, 1, 2))
        self.assertEqual((check["parametrization"], check["base_width"]), ("mup", 16))
        resid = check["quantities"]["resid_rms"]["values"]
        run("train", *common, "--set", "model.d_model=32", "--set", "model.d_ff=64", "--set", "model.base_width=16",
            "--set", "telemetry.every=1", "--set", "telemetry.val_every=0", "--steps", "3", "--out",
            str(self.tmp / "width32"), "--quiet", check_rc=0)
        metrics = [m for m in self.read_metrics(self.tmp / "width32") if "layers" in m]
        self.assertEqual(len(metrics), 3)
        for step, record in enumerate(metrics):
            for block, layer in enumerate(record["layers"]):
                self.assertAlmostEqual(resid[1][step][block], math.sqrt(layer["resid"]), places=9)
        for q, quantity in check["quantities"].items():
            for step in range(3):
                means = [sum(values[step]) / len(values[step]) if quantity["per_block"] else values[step]
                         for values in quantity["values"]]
                xs = [math.log(w) for w in check["widths"]]
                ys = [math.log(m) for m in means]
                mx, my = sum(xs) / 3, sum(ys) / 3
                slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
                self.assertAlmostEqual(quantity["width_exponent"][step], slope, places=9, msg=q)
        self.expect_bad_input(["probe", "--coord-check", *common, "--widths", "16", "--out", str(out)], "two widths")
        self.expect_bad_input(["probe", "--coord-check", *common, "--widths", "16,x", "--out", str(out)], "--widths")
        self.expect_bad_input(["probe", "--coord-check", *common, "--widths", "16,33", "--out", str(self.tmp / "c2")],
                              "width 33")
        self.expect_bad_input(["probe", "--coord-check", *common, "--widths", "16,32", "--out", str(out)], "--overwrite")

    def test_telemetry_every_keeps_every_step_and_every_validation(self):
        out = self.tmp / "run"
        run("train", "--preset", "quickstart", *TINY, "--set", "telemetry.every=4", "--set", "telemetry.val_every=3",
            "--steps", "10", "--out", str(out), "--quiet", check_rc=0)
        metrics = self.read_metrics(out)
        self.assertEqual([m["step"] for m in metrics], list(range(1, 11)))
        for m in metrics:
            self.assertTrue(m["loss"] > 0 and m["lr"] > 0 and m["grad_norm"] > 0, m)
        self.assertEqual([m["step"] for m in metrics if "layers" in m], [1, 4, 8])
        self.assertEqual([m["step"] for m in metrics if "val_loss" in m], [3, 6, 9, 10])
        summary = json.loads((out / "summary.json").read_text())
        self.assertEqual(summary["final_val_loss"], metrics[-1]["val_loss"])

    def test_write_failure_mid_run_is_recorded_as_failed(self):
        out = self.tmp / "run"
        result = run_with_file_size_limit(20000, "train", "--preset", "quickstart", *TINY, "--steps", "300",
                                          "--out", str(out), "--quiet")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("metrics.jsonl", result.stderr)
        self.assertIn("disk space", result.stderr)
        summary = json.loads((out / "summary.json").read_text())
        self.assertEqual(summary["status"], "failed")
        self.assertIn("metrics.jsonl", summary["error"])
        self.assertGreater(summary["steps"], 0)
        self.assertLess(summary["steps"], 300)
        events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
        self.assertEqual(events[-1]["kind"], "failed")

    def mount_small_disk(self, kilobytes):
        """A tmpfs of the given size (root only), unmounted after the test."""
        if os.geteuid() != 0:
            self.skipTest("mounting a small tmpfs needs root")
        disk = self.tmp / f"disk{kilobytes}"
        disk.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kilobytes}k", "tmpfs", str(disk)], check=True)
        self.addCleanup(subprocess.run, ["umount", str(disk)], check=True)
        return disk

    def assert_whole_lines(self, path):
        data = path.read_bytes()
        self.assertTrue(data == b"" or data.endswith(b"\n"), f"{path} ends in a torn line")
        return [json.loads(line) for line in data.splitlines()]

    def test_a_full_disk_at_the_start_is_recorded_as_failed(self):
        """8000 bytes hold config.json and the first summary but not the 16 KB reserve: the folder used to
        say "running" forever; it says "failed" with the reason."""
        out = self.tmp / "run"
        result = run_with_file_size_limit(8000, "train", "--preset", "quickstart", *TINY, "--steps", "5", "--out",
                                          str(out), "--quiet")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(".summary-reserve", result.stderr)
        summary = json.loads((out / "summary.json").read_text())
        self.assertEqual(summary["status"], "failed")
        self.assertIn(".summary-reserve", summary["error"])

    def test_a_full_disk_ends_the_run_as_failed_and_keeps_what_was_written(self):
        """A real full disk (a 64 KB tmpfs) while metrics are written, and one that holds the first
        periodic checkpoint but not a second: the run ends as failed with the reason, every metrics line is
        whole, and the checkpoint already there is intact."""
        out = self.mount_small_disk(64) / "run"
        result = run("train", "--preset", "quickstart", "--set", "model.layers=2", "--steps", "300", "--out", str(out),
                     "--quiet")
        self.assertEqual(result.returncode, 2, result.stderr)
        summary = json.loads((out / "summary.json").read_text())
        self.assertEqual(summary["status"], "failed")
        self.assertIn("metrics.jsonl", summary["error"])
        metrics = self.assert_whole_lines(out / "metrics.jsonl")
        self.assertEqual([m["step"] for m in metrics], list(range(1, len(metrics) + 1)))
        self.assertGreater(len(metrics), 5)

        out = self.mount_small_disk(2600) / "run"
        result = run("train", "--preset", "quickstart", "--set", "model.layers=2", "--steps", "60",
                     "--set", "train.checkpoint_every=20", "--set", "telemetry.every=100", "--out", str(out), "--quiet")
        self.assertEqual(result.returncode, 2, result.stderr)
        summary = json.loads((out / "summary.json").read_text())
        self.assertEqual(summary["status"], "failed")
        self.assertIn("model.safetensors", summary["error"])
        self.assertEqual(summary["checkpoint_step"], 20)
        self.assertEqual(safetensors_metadata(out / "model.safetensors")["normlab_step"], "20")
        self.assertEqual(list(out.glob("*.tmp")), [])
        self.assertEqual(len(self.assert_whole_lines(out / "metrics.jsonl")), summary["steps"])
        run("train", "--resume", str(out / "model.safetensors"), "--steps", "21", "--out", str(self.tmp / "resumed"),
            "--quiet", check_rc=0)

    def test_summary_is_written_before_the_checkpoint(self):
        out = self.tmp / "run"
        result = run_with_file_size_limit(60000, "train", "--preset", "quickstart", *TINY, "--steps", "3",
                                          "--out", str(out), "--save-checkpoint", "--quiet")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("model.safetensors", result.stderr)
        summary = json.loads((out / "summary.json").read_text())
        self.assertEqual(summary["status"], "completed")
        self.assertEqual(summary["steps"], 3)
        self.assertIn("model.safetensors", summary["checkpoint_error"])
        self.assertFalse((out / "model.safetensors").exists())
        self.assertFalse((out / "model.safetensors.tmp").exists())

    def test_a_resume_with_nothing_to_train_is_refused(self):
        # It used to train nothing and exit 0 as "completed".
        first, second = self.tmp / "first", self.tmp / "second"
        run("train", "--preset", "quickstart", *TINY, "--steps", "2", "--out", str(first), "--save-checkpoint",
            "--quiet", check_rc=0)
        checkpoint = str(first / "model.safetensors")
        self.expect_bad_input(["train", "--resume", checkpoint, "--out", str(second)], "nothing to train",
                              "--steps N with N > 2", out=second)
        self.expect_bad_input(["train", "--resume", checkpoint, "--steps", "2", "--out", str(second)],
                              "nothing to train", out=second)
        run("train", "--resume", checkpoint, "--steps", "4", "--out", str(second), "--quiet", check_rc=0)
        self.assertEqual(json.loads((second / "summary.json").read_text())["steps"], 4)

    def test_a_diverged_run_keeps_its_last_finite_loss_and_its_blocks(self):
        out = self.tmp / "run"
        run("train", "--preset", "quickstart", *TINY, "--set", "model.norm_placement=none", "--set",
            "train.optimizer=sgd", "--set", "train.lr=1e8", "--set", "train.diverge_loss=0", "--steps", "50",
            "--out", str(out), "--quiet", check_rc=0)
        summary = json.loads((out / "summary.json").read_text())
        self.assertEqual(summary["status"], "diverged")
        losses = [json.loads(l)["loss"] for l in (out / "metrics.jsonl").read_text().splitlines()]
        finite = [l for l in losses if l is not None and math.isfinite(l)]
        self.assertTrue(finite)
        self.assertEqual(summary["final_loss"], finite[-1])
        # The diverging step's line has every block, the bad values as null.
        last = json.loads((out / "metrics.jsonl").read_text().splitlines()[-1])
        self.assertEqual(last["step"], summary["diverged_at"])
        self.assertEqual(len(last["layers"]), 2)
        self.assertIn("null", json.dumps(last["layers"]))

    def test_sigint_exits_130_and_the_folder_says_stopped(self):
        out = self.tmp / "run"
        train = subprocess.Popen([CLI, "train", "--preset", "quickstart", *TINY, "--steps", "1000000", "--out",
                                  str(out), "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(400):
            if (out / "metrics.jsonl").exists() and (out / "metrics.jsonl").stat().st_size > 0:
                break
            time.sleep(0.025)
        train.send_signal(signal.SIGINT)
        self.assertEqual(train.wait(timeout=60), 130)
        self.assertEqual(json.loads((out / "summary.json").read_text())["status"], "stopped")

    def test_deepnorm_outside_post_ln_trains_with_a_note(self):
        out = self.tmp / "run"
        result = run("train", "--preset", "quickstart", *TINY, "--set", "model.residual=deepnorm", "--steps", "2",
                     "--out", str(out), check_rc=0)
        self.assertIn("note: model.residual=deepnorm with model.norm_placement=pre", result.stderr)
        self.assertIn("model.norm_placement=post", result.stderr)
        self.assertIn("Post-LN scheme", run("train", "--help", check_rc=0).stdout)

    def test_fp16_with_a_dynamic_loss_scale_logs_skips_and_the_blocks_precision(self):
        # From 2^30 the scaled gradients overflow fp16: the first steps are skipped, each halving the scale.
        out = self.tmp / "run"
        run("train", "--preset", "quickstart", *TINY, "--set", "train.precision=fp16", "--set",
            "train.loss_scale=dynamic:1073741824", "--steps", "30", "--out", str(out), "--quiet", check_rc=0)
        self.assertEqual(json.loads((out / "summary.json").read_text())["status"], "completed")
        lines = [json.loads(l) for l in (out / "metrics.jsonl").read_text().splitlines()]
        events = [json.loads(l) for l in (out / "events.jsonl").read_text().splitlines()]
        skipped = [e for e in events if e["kind"] == "skipped_step"]
        self.assertGreaterEqual(len(skipped), 5)
        self.assertIn("overflowed; the scale is now", skipped[0]["message"])
        last = lines[-1]
        self.assertEqual(last["skipped_steps"], len(skipped))
        self.assertEqual(last["loss_scale"] * 2 ** len(skipped), 2 ** 30)
        for field in ("act_overflow", "act_underflow", "grad_overflow", "grad_underflow", "stream_headroom"):
            self.assertIn(field, last["layers"][0])
        self.assertGreater(last["layers"][0]["stream_headroom"], 0)
        # fp32 without a loss scale writes none of these fields
        plain = self.tmp / "plain"
        run("train", "--preset", "quickstart", *TINY, "--steps", "2", "--out", str(plain), "--quiet", check_rc=0)
        first = json.loads((plain / "metrics.jsonl").read_text().splitlines()[0])
        self.assertNotIn("loss_scale", first)
        self.assertNotIn("act_overflow", first["layers"][0])

    def test_diverged_run_is_a_result(self):
        out = self.tmp / "run"
        result = run("train", "--preset", "quickstart", *TINY, "--set", "model.norm_placement=none",
                     "--set", "train.optimizer=sgd", "--set", "train.lr=1e8", "--steps", "50", "--out", str(out),
                     "--quiet", check_rc=0)
        summary = json.loads((out / "summary.json").read_text())
        self.assertEqual(summary["status"], "diverged")
        self.assertIsInstance(summary["diverged_at"], int)
        self.assertIsInstance(summary["first_bad_layer"], int)
        events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
        self.assertEqual(events[-1]["kind"], "diverged")
        self.assertEqual(json.loads(result.stdout)["status"], "diverged")


class BadInput(CliTestCase):
    def train_args(self, *extra):
        return ["train", "--preset", "quickstart", "--out", str(self.tmp / "run"), *extra]

    def test_malformed_json(self):
        config = self.tmp / "bad.json"
        config.write_text('{"model": {"d_model": 64,}}')
        self.expect_bad_input(["train", "--config", str(config), "--out", str(self.tmp / "run")], "bad.json",
                              out=self.tmp / "run")

    def test_unknown_key(self):
        self.expect_bad_input(self.train_args("--set", "model.d_modle=64"), "model.d_modle", "model.d_model",
                              out=self.tmp / "run")

    def test_d_model_not_divisible_by_heads(self):
        self.expect_bad_input(self.train_args("--set", "model.d_model=100", "--set", "model.heads=3"),
                              "divisible", out=self.tmp / "run")

    def test_architecture_keys_that_do_not_fit_the_heads(self):
        # exit 2, naming the key and what to set instead (docs/model.md#architecture-keys)
        self.expect_bad_input(self.train_args("--set", "model.kv_heads=3"),
                              "model.kv_heads (3) must divide model.heads (4)", "one of 1, 2, 4", out=self.tmp / "run")
        self.expect_bad_input(self.train_args("--set", "model.position=rope", "--set", "model.heads=64"),
                              "model.position=rope", "is odd", out=self.tmp / "run")
        self.expect_bad_input(self.train_args("--set", "model.ffn=glu"), "model.ffn", "mlp|swiglu|geglu",
                              out=self.tmp / "run")

    def test_zero_and_negative_sizes(self):
        for assignment in ("model.layers=0", "model.d_model=-8", "train.batch_size=0", "model.seq_len=0"):
            self.expect_bad_input(self.train_args("--set", assignment), assignment.split("=")[0],
                                  out=self.tmp / "run")

    def test_bad_precision_and_loss_scale(self):
        self.expect_bad_input(self.train_args("--set", "train.precision=fp64"), "train.precision",
                              "fp32|bf16|fp16|fp8_e4m3", out=self.tmp / "run")
        for value in ("0", "auto", "dynamic:", "-4"):
            self.expect_bad_input(self.train_args("--set", f"train.loss_scale={value}"), "train.loss_scale",
                                  "none, dynamic", out=self.tmp / "run")
        self.expect_bad_input(self.train_args("--change", "5:train.loss_scale=zero"), "train.loss_scale",
                              out=self.tmp / "run")

    def test_negative_or_non_finite_lr(self):
        self.expect_bad_input(self.train_args("--set", "train.lr=-0.1"), "train.lr", out=self.tmp / "run")
        config = self.tmp / "nan.json"
        config.write_text('{"train": {"lr": NaN}}')
        self.expect_bad_input(["train", "--config", str(config), "--out", str(self.tmp / "run")], "nan.json",
                              out=self.tmp / "run")
        self.expect_bad_input(self.train_args("--set", "train.lr=1e999"), "train.lr", out=self.tmp / "run")

    def test_text_file_problems(self):
        missing = self.tmp / "missing.txt"
        self.expect_bad_input(self.train_args("--set", f"data.text_path={missing}"), "missing.txt",
                              out=self.tmp / "run")
        empty = self.tmp / "empty.txt"
        empty.write_bytes(b"")
        self.expect_bad_input(self.train_args("--set", f"data.text_path={empty}"), "empty", out=self.tmp / "run")
        latin1 = self.tmp / "latin1.txt"
        latin1.write_bytes(("caf\xe9 " * 200).encode("latin-1"))
        self.expect_bad_input(self.train_args("--set", f"data.text_path={latin1}"), "UTF-8", out=self.tmp / "run")

    def test_model_too_large_for_memory(self):
        stderr = self.expect_bad_input(self.train_args("--set", "model.d_model=16384", "--set", "model.d_ff=65536",
                                                       "--set", "model.layers=2000"), "MiB", out=self.tmp / "run")
        self.assertIn("model.d_model", stderr)

    def test_cuda_without_a_gpu_names_the_reason(self):
        result = run(*self.train_args("--set", "device=cuda", "--steps", "2", *TINY))
        if result.returncode == 0:
            self.skipTest("a CUDA GPU answered")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("device=cuda was asked for, but ", result.stderr)
        self.assertTrue("no CUDA GPU answered (" in result.stderr or "has no CUDA backend" in result.stderr,
                        result.stderr)
        self.assertIn("; use device=cpu or device=auto", result.stderr)
        self.assertFalse((self.tmp / "run" / "summary.json").exists(), "a run folder was left behind")

    def test_existing_folder_is_not_overwritten(self):
        out = self.tmp / "run"
        out.mkdir()
        (out / "notes.txt").write_text("precious")
        self.expect_bad_input(self.train_args(), "--overwrite")
        self.assertEqual((out / "notes.txt").read_text(), "precious")

    def test_non_live_change(self):
        self.expect_bad_input(self.train_args("--change", "5:model.layers=3"), "model.layers", out=self.tmp / "run")

    def test_bad_changes_are_refused_before_training(self):
        # Each of these used to train to the end, exit 0, and log only a rejected_change event.
        run_dir = self.tmp / "run"
        for change, fragments in (("100:train.lr=abc", ["100:train.lr=abc", "train.lr"]),
                                  ("100:train.lr=-1", ["100:train.lr=-1", "train.lr"]),
                                  ("100:model.norm_placement=sideways", ["sideways", "post"]),
                                  ("700:train.lr=1e-4", ["after the run's last step 200"]),
                                  ("100:train.lrr=1e-4", ["did you mean 'train.lr'"]),
                                  ("100:reinit_deepnorm_beta", ["deepnorm", "model.residual"])):
            self.expect_bad_input(self.train_args("--steps", "200", "--change", change), *fragments, out=run_dir)
        # Two values of one key before one step: only the last would count, so neither is taken.
        self.expect_bad_input(self.train_args("--steps", "200", "--change", "50:model.norm_placement=post",
                                              "--change", "50:model.norm_placement=peri"),
                              "two changes of model.norm_placement before step 50", out=run_dir)
        # A change made valid by an earlier one is accepted: DeepNorm switched on, then its re-init.
        run(*self.train_args("--steps", "6", "--change", "3:model.residual=deepnorm", "--change",
                             "4:reinit_deepnorm_beta", "--quiet"), check_rc=0)

    def test_small_silent_successes_are_refused(self):
        self.expect_bad_input(["train", "--preset", "quickstart", "--preset", "periln", "--out",
                               str(self.tmp / "run")], "--preset is given twice", out=self.tmp / "run")
        self.expect_bad_input(["probe", "--preset", "theory-postln", "--steps", "10", "--out",
                               str(self.tmp / "probe")], "drop --steps")
        grads = self.tmp / "does" / "not" / "exist"
        run("dump-grads", "--preset", "quickstart", *TINY, "--steps", "1", "--out", str(grads), check_rc=0)
        self.assertTrue((grads / "grads.safetensors").exists())

    def test_oversized_integers_name_the_flag(self):
        self.expect_bad_input(self.train_args("--steps", "4294967295"), "--steps", "[0, 2147483647]",
                              out=self.tmp / "run")
        self.expect_bad_input(self.train_args("--steps", "99999999999999999999"), "--steps", out=self.tmp / "run")
        self.expect_bad_input(["probe", "--preset", "theory-postln", "--batches", "4294967297", "--out",
                               str(self.tmp / "probe")], "--batches", "[1, 2147483647]", out=self.tmp / "probe")
        self.expect_bad_input(["bench", "--preset", "quickstart", "--warmup", "4294967296"], "--warmup")
        self.expect_bad_input(["bench", "--preset", "quickstart", "--warmup", "2147483647", "--steps", "10"],
                              "--warmup + --steps")

    def test_config_and_text_must_be_regular_files(self):
        self.expect_bad_input(["train", "--config", "/dev/null", "--out", str(self.tmp / "run")], "/dev/null",
                              "not a regular file", out=self.tmp / "run")
        self.expect_bad_input(["train", "--config", str(self.tmp), "--out", str(self.tmp / "run")], "directory",
                              out=self.tmp / "run")
        self.expect_bad_input(self.train_args("--set", "data.text_path=/dev/null"), "data.text_path",
                              "not a regular file", out=self.tmp / "run")
        self.expect_bad_input(self.train_args("--set", f"data.text_path={self.tmp}"), "data.text_path", "directory",
                              out=self.tmp / "run")

    def test_threads_has_an_upper_bound(self):
        self.expect_bad_input(self.train_args("--set", "threads=100000"), "threads", "[0, 1024]",
                              out=self.tmp / "run")

    def test_eval_set_takes_only_evaluation_keys(self):
        good = self.checkpoint()
        tokens = self.tmp / "tokens.txt"
        tokens.write_text("1 2 3 4\n")
        for assignment in ("model.layers=3", "train.lr=1", "data.text_path=x.txt"):
            self.expect_bad_input(["eval", "--checkpoint", str(good), "--tokens", str(tokens), "--set", assignment],
                                  assignment.split("=")[0], "eval --set accepts only device, threads")
        result = run("eval", "--checkpoint", str(good), "--tokens", str(tokens), "--set", "threads=1", "--set",
                     "device=cpu", check_rc=0)
        self.assertEqual(json.loads(result.stdout)["tokens"], 3)

    def checkpoint(self):
        out = self.tmp / "ckpt"
        run("train", "--preset", "quickstart", *TINY, "--steps", "2", "--out", str(out), "--save-checkpoint",
            "--quiet", check_rc=0)
        return out / "model.safetensors"

    def test_truncated_and_corrupt_checkpoints(self):
        good = self.checkpoint()
        tokens = self.tmp / "tokens.txt"
        tokens.write_text("1 2 3\n")
        blob = good.read_bytes()
        truncated = self.tmp / "truncated.safetensors"
        truncated.write_bytes(blob[: len(blob) // 2])
        self.expect_bad_input(["eval", "--checkpoint", str(truncated), "--tokens", str(tokens)], "truncated")
        corrupt = self.tmp / "corrupt.safetensors"
        corrupt.write_bytes(blob[:8] + b"{" * 20 + blob[28:])
        self.expect_bad_input(["eval", "--checkpoint", str(corrupt), "--tokens", str(tokens)], "corrupt.safetensors")
        garbage = self.tmp / "garbage.safetensors"
        garbage.write_bytes(os.urandom(4096))
        self.expect_bad_input(["eval", "--checkpoint", str(garbage), "--tokens", str(tokens)], "garbage.safetensors")
        self.expect_bad_input(["train", "--resume", str(truncated), "--out", str(self.tmp / "run")], "truncated",
                              out=self.tmp / "run")

    def test_checkpoint_missing_a_tensor(self):
        good = self.checkpoint()
        blob = good.read_bytes()
        (length,) = struct.unpack("<Q", blob[:8])
        header = json.loads(blob[8:8 + length])
        renamed = json.dumps(header).replace('"head.weight"', '"head.weigh"').encode()
        renamed += b" " * (-len(renamed) % 8)
        broken = self.tmp / "broken.safetensors"
        broken.write_bytes(struct.pack("<Q", len(renamed)) + renamed + blob[8 + length:])
        tokens = self.tmp / "tokens.txt"
        tokens.write_text("1 2 3\n")
        self.expect_bad_input(["eval", "--checkpoint", str(broken), "--tokens", str(tokens)], "head.weight")

    def test_token_ids_out_of_range_and_malformed(self):
        good = self.checkpoint()
        tokens = self.tmp / "tokens.txt"
        tokens.write_text("1 2 3\n4 256 5\n")
        self.expect_bad_input(["eval", "--checkpoint", str(good), "--tokens", str(tokens)], "line 2", "256")
        tokens.write_text("1 two 3\n")
        self.expect_bad_input(["eval", "--checkpoint", str(good), "--tokens", str(tokens)], "'two'")
        tokens.write_text(" ".join(["7"] * 40) + "\n")
        self.expect_bad_input(["eval", "--checkpoint", str(good), "--tokens", str(tokens)], "seq_len")
        self.expect_bad_input(["eval", "--checkpoint", str(good), "--tokens", str(self.tmp / "none.txt")], "none.txt")


def main(description=__doc__):
    """Runs the tests of the __main__ module (this file's, or those of a file that imports it) against
    the normlab-cli named by --cli; the other CLI test files call it too."""
    global CLI
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--cli", required=True)
    args, rest = parser.parse_known_args()
    CLI = os.path.abspath(args.cli)
    program = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=1)
    result = program.result
    failed = len(result.failures) + len(result.errors)
    print(f"{result.testsRun - failed} passed, {failed} failed")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
