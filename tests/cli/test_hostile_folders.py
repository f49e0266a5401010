#!/usr/bin/env python3
"""normlab-cli against hostile files (issue 31): JSON nested 50,000 levels deep in every file and flag
that takes JSON, FIFOs and links to /dev/zero in place of small files, a symlink loop among run folders,
a sparse 4 GB checkpoint, and links planted where exports write. Each must give exit code 2 (or a
listing with a note), never a crash, a hang (every run has a timeout), an allocation of gigabytes (run
under a 2 GB address-space limit) or a write through a planted link."""
import json
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import test_cli
from test_cli import TINY, CliTestCase

DEEP = "[" * 50000 + "]" * 50000
MEMORY_LIMIT = 2 << 30


def limited_run(*args, timeout=120):
    """normlab-cli with at most 2 GB of address space (a 4 GB allocation fails) and a timeout (a hang)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    return subprocess.run([test_cli.CLI, *args], capture_output=True, text=True, timeout=timeout, preexec_fn=limit)


def write_safetensors_header(path, header, data_bytes):
    """A safetensors file of `header` whose data section is `data_bytes` long and holds nothing (sparse)."""
    text = json.dumps(header).encode()
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)) + text)
        out.truncate(8 + len(text) + data_bytes)


class HostileFolders(CliTestCase):
    def expect_refused(self, args, *fragments):
        result = limited_run(*args)
        self.assertEqual(result.returncode, 2, f"{args[:3]}: {result.stderr[-2000:]}")
        for fragment in fragments:
            self.assertIn(fragment, result.stderr, f"{args[:3]}: message lacks '{fragment}'")
        self.assertLess(len(result.stderr), 4000, "an untrusted value was copied whole into the message")
        return result

    def trained_run(self, name="run", *extra):
        out = self.tmp / name
        test_cli.run("train", "--preset", "quickstart", *TINY, "--steps", "2", "--out", str(out), "--quiet", *extra,
                     check_rc=0)
        return out

    def test_deep_json_in_configs_flags_and_sweeps_exits_2(self):
        deep = self.tmp / "deep.json"
        deep.write_text('{"model": {"d_model": ' + DEEP + "}}")
        self.expect_refused(["train", "--config", str(deep), "--out", str(self.tmp / "a")], "deep.json",
                            "nested deeper than 64")
        self.expect_refused(["train", "--set", "train.lr=" + DEEP, "--out",
                             str(self.tmp / "b")], "train.lr")
        sweep_file = self.tmp / "sweep-file.json"
        sweep_file.write_text('{"base": {"set": {"train.lr": ' + DEEP + '}}, "axes": {"train.lr": [1]}}')
        self.expect_refused(["sweep", "plan", str(sweep_file), "--out", str(self.tmp / "s")], "nested deeper")
        folder = self.tmp / "sweep"
        folder.mkdir()
        (folder / "sweep.json").write_text('{"format": "normlab-sweep", "version": ' + DEEP + "}")
        self.expect_refused(["sweep", "status", str(folder)], "sweep.json", "nested deeper")

    def test_deep_json_in_a_run_folder_from_elsewhere_is_listed(self):
        out = self.trained_run()
        (out / "summary.json").write_text('{"status": ' + DEEP + "}")
        for config in ('{"model": {"d_model": ' + DEEP + "}}", '{"source": "x", "model": ' + DEEP + "}"):
            (out / "config.json").write_text(config)
            result = limited_run("runs", str(out), "--json")
            self.assertEqual(result.returncode, 0, result.stderr[-2000:])
            self.assertEqual(len(json.loads(result.stdout)), 1)

    def test_deep_safetensors_metadata_exits_2(self):
        checkpoint = self.tmp / "deep.safetensors"
        write_safetensors_header(checkpoint, {"__metadata__": {"normlab_config": "{}", "x": []}}, 0)
        blob = checkpoint.read_bytes().replace(b'"x": []', b'"x": ' + DEEP.encode())
        checkpoint.write_bytes(struct.pack("<Q", len(blob) - 8) + blob[8:])
        tokens = self.tmp / "tokens.txt"
        tokens.write_text("1 2 3\n")
        self.expect_refused(["eval", "--checkpoint", str(checkpoint), "--tokens", str(tokens)], "nested deeper")
        self.expect_refused(["train", "--resume", str(checkpoint), "--out", str(self.tmp / "r")], "nested deeper")

    def test_fifos_and_dev_zero_in_place_of_small_files_neither_hang_nor_fill_memory(self):
        fifo_config = self.tmp / "fifo.json"
        os.mkfifo(fifo_config)
        self.expect_refused(["train", "--config", str(fifo_config), "--out", str(self.tmp / "a")],
                            "not a regular file (a FIFO)")
        out = self.trained_run()
        for name in ("config.json", "summary.json"):
            (out / name).unlink()
            os.mkfifo(out / name)
        result = limited_run("runs", str(out), timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        for name in ("config.json", "summary.json"):
            (out / name).unlink()
            (out / name).symlink_to("/dev/zero")
        result = limited_run("runs", str(out), timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_resuming_into_a_folder_whose_logs_are_links_writes_nothing_outside(self):
        out = self.trained_run("linked", "--set", "train.checkpoint_every=1")
        outside = self.tmp / "outside.jsonl"
        for name in ("metrics.jsonl", "events.jsonl"):
            outside.write_text('{"step": 1}\n{"step": 2}\n{"step": 3}\n')
            before = outside.read_bytes()
            kept = (out / name).read_bytes()
            (out / name).unlink()
            (out / name).symlink_to(outside)
            self.expect_refused(["train", "--resume", str(out / "model.safetensors"), "--out", str(out),
                                 "--steps", "4"], name, "is a link")
            self.assertEqual(outside.read_bytes(), before, f"{name}: resume cut or appended through the link")
            (out / name).unlink()
            (out / name).write_bytes(kept)

    def test_fifos_in_a_sweep_folder_neither_hang_status_nor_run(self):
        folder = self.tmp / "sweep"
        test_cli.run("sweep", "plan", "--preset", "quickstart", *TINY, "--axis", "train.lr=1e-3,1e-2", "--steps", "3",
                     "--out", str(folder), check_rc=0)
        (folder / "claims").mkdir()
        plan = json.loads((folder / "sweep.json").read_text())
        os.mkfifo(folder / "claims" / (plan["points"][0]["id"] + ".json"))
        result = limited_run("sweep", "status", str(folder), timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        (folder / "sweep.json").unlink()
        os.mkfifo(folder / "sweep.json")
        self.expect_refused(["sweep", "status", str(folder)], "a FIFO")
        self.expect_refused(["sweep", "run", str(folder)], "a FIFO")

    def test_a_symlink_loop_among_run_folders_is_skipped_with_a_note(self):
        runs = self.tmp / "runs"
        runs.mkdir()
        self.trained_run("runs/good")
        (runs / "loop").symlink_to("loop")
        result = limited_run("runs", str(runs), "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([Path(row["folder"]).name for row in json.loads(result.stdout)], ["good"])
        self.assertIn("skipped", result.stderr)
        self.assertIn("loop", result.stderr)

    def test_a_sparse_4_gb_checkpoint_is_refused_before_allocating(self):
        out = self.trained_run("ckpt", "--save-checkpoint")
        blob = (out / "model.safetensors").read_bytes()
        (length,) = struct.unpack("<Q", blob[:8])
        header = json.loads(blob[8:8 + length])
        data_bytes = len(blob) - 8 - length
        header["padding"] = {"dtype": "F32", "shape": [1 << 30], "data_offsets": [data_bytes, data_bytes + (4 << 30)]}
        sparse = self.tmp / "sparse.safetensors"
        write_safetensors_header(sparse, header, data_bytes + (4 << 30))
        self.assertLess(os.stat(sparse).st_blocks * 512, 1 << 20, "the file system does not make sparse files")
        tokens = self.tmp / "tokens.txt"
        tokens.write_text("1 2 3\n")
        self.expect_refused(["eval", "--checkpoint", str(sparse), "--tokens", str(tokens)], "sparse")
        self.expect_refused(["train", "--resume", str(sparse), "--out", str(self.tmp / "r")], "sparse")


    def test_links_planted_at_output_names_are_not_written_through(self):
        out = self.trained_run()
        victim = self.tmp / "victim.txt"
        victim.write_text("keep")
        table = self.tmp / "metrics.csv"
        (self.tmp / "metrics.csv.partial").symlink_to(victim)
        result = limited_run("export", "--run", str(out), "--metrics", "--format", "csv", "--out", str(table))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(victim.read_text(), "keep")
        self.assertTrue(table.is_file() and not table.is_symlink())
        occupied = self.tmp / "occupied.csv"
        (occupied / "child").mkdir(parents=True)
        self.expect_refused(["export", "--run", str(out), "--metrics", "--format", "csv", "--out", str(occupied)],
                            "occupied.csv")
        folder = self.tmp / "sweep"
        test_cli.run("sweep", "plan", "--preset", "quickstart", *TINY, "--axis", "train.lr=1e-3,1e-2", "--steps", "3",
                     "--out", str(folder), check_rc=0)
        (folder / "points.csv").symlink_to(victim)
        result = limited_run("sweep", "collect", str(folder))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(victim.read_text(), "keep")
        self.assertFalse((folder / "points.csv").is_symlink())

    # Sweeps: each point exactly once, inside its folder (issue 31).
    STALE = {"NORMLAB_TEST_CLAIM_STALE_SECONDS": "1.5"}

    def plan_sweep(self, name, *extra, steps=300, values="1e-3"):
        folder = self.tmp / name
        test_cli.run("sweep", "plan", "--preset", "quickstart", *TINY, "--axis", "train.lr=" + values, "--steps",
                     str(steps), "--set", "train.checkpoint_every=50", "--out", str(folder), *extra, check_rc=0)
        return folder, json.loads((folder / "sweep.json").read_text())["points"]

    def folder_state(self, folder):
        """Every file under `folder` with its size and modification time: what a writer changed."""
        return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
                for p in sorted(folder.rglob("*")) if p.is_file()}

    def assert_trained_once(self, folder, point, steps):
        run_dir = folder / "runs" / point
        lines = [json.loads(l)["step"] for l in (run_dir / "metrics.jsonl").read_text().splitlines()]
        self.assertEqual(lines, list(range(1, steps + 1)))
        summary = json.loads((run_dir / "summary.json").read_text())
        self.assertEqual((summary["status"], summary["steps"]), ("completed", steps))
        self.assertEqual(test_cli.safetensors_metadata(run_dir / "model.safetensors")["normlab_step"], str(steps))
        self.assertEqual([p.name for p in run_dir.iterdir() if p.suffix == ".tmp"], [])

    def test_a_worker_stopped_past_the_stale_age_writes_nothing_more(self):
        folder, points = self.plan_sweep("stop", steps=3000)
        point = points[0]["id"]
        env = dict(os.environ, **self.STALE)
        first = subprocess.Popen([test_cli.CLI, "sweep", "run", str(folder), "--jobs", "1", "--quiet"], env=env,
                                 start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        metrics = folder / "runs" / point / "metrics.jsonl"
        deadline = time.time() + 60
        while time.time() < deadline and (not metrics.exists() or metrics.read_text().count("\n") < 100):
            time.sleep(0.02)
        os.killpg(first.pid, signal.SIGSTOP)  # the sweep and its worker, like a suspended Slurm job
        try:
            second = subprocess.run([test_cli.CLI, "sweep", "run", str(folder), "--quiet"], env=env,
                                    capture_output=True, text=True, timeout=120)
            self.assertEqual(second.returncode, 0, second.stderr)
            self.assert_trained_once(folder, point, 3000)
            finished = self.folder_state(folder / "runs")
        finally:
            os.killpg(first.pid, signal.SIGCONT)
        _, stderr = first.communicate(timeout=120)
        self.assertEqual(first.returncode, 0, stderr)  # the point is done; this worker's part is not a failure
        self.assertEqual(self.folder_state(folder / "runs"), finished, "the stopped worker wrote after its claim was lost")
        self.assertEqual(sorted(p.name for p in (folder / "claims").iterdir()), [])

    def test_a_pause_at_any_step_of_a_takeover_runs_the_point_once(self):
        for step in ("judged", "marker", "replaced"):
            with self.subTest(step=step):
                folder, points = self.plan_sweep("pause-" + step)
                point = points[0]["id"]
                (folder / "claims").mkdir()
                # A worker on another host died: its claim's heartbeat never moves again.
                (folder / "claims" / f"{point}.json").write_text(json.dumps(
                    {"host": "elsewhere", "pid": 4242, "token": "00000000000000aa", "heartbeat": time.time() + 3600}))
                env = dict(os.environ, **self.STALE)
                paused = subprocess.Popen([test_cli.CLI, "sweep", "run-point", str(folder), "--point", "0", "--quiet"],
                                          env=dict(env, NORMLAB_TEST_CLAIM_PAUSE=step + ":6"), stderr=subprocess.PIPE,
                                          text=True)
                time.sleep(3.0)  # it judged the claim stale (1.5 s of watching) and now sleeps at `step`
                other = subprocess.run([test_cli.CLI, "sweep", "run-point", str(folder), "--point", "0", "--quiet"],
                                       env=env, capture_output=True, text=True, timeout=120)
                self.assertEqual(other.returncode, 0, other.stderr)
                self.assert_trained_once(folder, point, 300)
                finished = self.folder_state(folder / "runs")
                _, stderr = paused.communicate(timeout=120)
                self.assertIn(paused.returncode, (0, 3), stderr)
                self.assertEqual(self.folder_state(folder / "runs"), finished, step)
                self.assertEqual(sorted(p.name for p in (folder / "claims").iterdir()), [])

    def test_symlinked_point_and_claims_folders_are_refused(self):
        folder, points = self.plan_sweep("links", steps=5, values="1e-3,1e-2")
        outside = self.tmp / "outside"
        outside.mkdir()
        (outside / "model.safetensors").write_text("not yours")
        (outside / "left.tmp").write_text("not yours either")
        (folder / "runs").mkdir()
        (folder / "runs" / points[0]["id"]).symlink_to(outside)
        result = limited_run("sweep", "run", str(folder), "--quiet")
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("is a symbolic link", result.stderr)
        self.assertEqual(sorted(p.name for p in outside.iterdir()), ["left.tmp", "model.safetensors"])
        self.assertEqual((outside / "model.safetensors").read_text(), "not yours")
        status = json.loads(limited_run("sweep", "status", str(folder), "--json").stdout)
        self.assertEqual([p["state"] for p in status["points"]], ["failed", "done"])
        self.assertIn("is a symbolic link", status["points"][0]["error"])
        (folder / "runs" / points[0]["id"]).unlink()
        shutil.rmtree(folder / "claims", ignore_errors=True)
        (folder / "claims").symlink_to(outside)
        self.expect_refused(["sweep", "run", str(folder)], "claims is a symbolic link")
        self.expect_refused(["sweep", "run-point", str(folder), "--point", "0"], "claims is a symbolic link")
        self.assertEqual(sorted(p.name for p in outside.iterdir()), ["left.tmp", "model.safetensors"])

    def test_a_foreign_sweep_json_cannot_name_files_outside_the_sweep(self):
        folder, _ = self.plan_sweep("paths", steps=3)
        plan = json.loads((folder / "sweep.json").read_text())
        for path in ("/etc/passwd", "../../secret.txt"):
            plan["base_config"]["data"]["text_path"] = path
            (folder / "sweep.json").write_text(json.dumps(plan))
            self.expect_refused(["sweep", "run", str(folder)], "data.text_path", "--set data.text_path=PATH")
        self.assertFalse((folder / "runs").exists())
        corpus = self.tmp / "corpus.txt"
        corpus.write_text("the quick brown fox jumps over the lazy dog. " * 400)
        sweep_file = self.tmp / "sweep-file.json"
        sweep_file.write_text(json.dumps({"base": {"preset": "quickstart", "set": {"data.task": "text",
                              "data.text_path": str(corpus)}}, "axes": {"train.lr": [1e-3]}, "steps": 3}))
        self.expect_refused(["sweep", "plan", str(sweep_file), "--out", str(self.tmp / "f")], "absolute path")
        # Given on the command line, the planner's own path is recorded as such and trusted.
        allowed, _ = self.plan_sweep("allowed", "--set", "data.task=text", "--set", f"data.text_path={corpus}", steps=3)
        self.assertEqual(json.loads((allowed / "sweep.json").read_text())["paths_from_command_line"], ["data.text_path"])
        self.assertEqual(limited_run("sweep", "run", str(allowed), "--quiet").returncode, 0)
        # A relative path is read inside the sweep folder, wherever the worker starts.
        sweep_file.write_text(json.dumps({"base": {"preset": "quickstart", "set": {"data.task": "text",
                              "data.text_path": "corpus.txt"}}, "axes": {"train.lr": [1e-3]}, "steps": 3}))
        inside = self.tmp / "inside"
        test_cli.run("sweep", "plan", str(sweep_file), "--out", str(inside), check_rc=0)
        result = limited_run("sweep", "run", str(inside), "--quiet")
        self.assertEqual(result.returncode, 1, result.stderr)  # no inside/corpus.txt yet
        status = json.loads(limited_run("sweep", "status", str(inside), "--json").stdout)
        self.assertEqual(status["points"][0]["state"], "failed")
        self.assertIn(str(inside / "corpus.txt"), status["points"][0]["error"])
        shutil.copy(corpus, inside / "corpus.txt")
        self.assertEqual(limited_run("sweep", "run", str(inside), "--quiet").returncode, 0)
        status = json.loads(limited_run("sweep", "status", str(inside), "--json").stdout)
        self.assertEqual(status["points"][0]["state"], "done")

    def point_error_after_run(self, folder):
        result = limited_run("sweep", "run", str(folder), "--quiet")
        self.assertEqual(result.returncode, 1, result.stderr)
        status = json.loads(limited_run("sweep", "status", str(folder), "--json").stdout)
        self.assertEqual(status["points"][0]["state"], "failed")
        for provenance in (folder / "runs").rglob("provenance.json"):
            self.assertNotIn("/etc/passwd", provenance.read_text())
        return status["points"][0]["error"]

    def test_a_forged_or_shared_trust_and_a_link_inside_the_sweep_reach_no_outside_file(self):
        # paths_from_command_line added by whoever edits sweep.json: trusted only in a file the worker's
        # user owns and no one else can write; a relative path that is a link out of the folder: refused.
        forged, _ = self.plan_sweep("forged", steps=3)
        plan = json.loads((forged / "sweep.json").read_text())
        plan["base_config"]["data"].update({"task": "text", "text_path": "/etc/passwd"})
        plan["paths_from_command_line"] = ["data.text_path"]
        (forged / "sweep.json").write_text(json.dumps(plan))
        os.chmod(forged / "sweep.json", 0o664)  # a group-shared folder's umask
        self.assertIn("can be written by others", self.point_error_after_run(forged))
        linked, _ = self.plan_sweep("linked-corpus", steps=3)
        plan = json.loads((linked / "sweep.json").read_text())
        plan["base_config"]["data"].update({"task": "text", "text_path": "corpus.txt"})
        (linked / "sweep.json").write_text(json.dumps(plan))
        (linked / "corpus.txt").symlink_to("/etc/passwd")
        self.assertIn("leads outside the sweep folder", self.point_error_after_run(linked))

    def test_a_folder_planted_as_a_claim_fails_its_point_clearly_and_leaves_no_marker(self):
        folder, points = self.plan_sweep("planted-claim", steps=3)
        (folder / "claims" / (points[0]["id"] + ".json")).mkdir(parents=True)
        result = limited_run("sweep", "run", str(folder), "--quiet")
        self.assertEqual(result.returncode, 1, result.stderr)
        status = json.loads(limited_run("sweep", "status", str(folder), "--json").stdout)
        self.assertEqual(status["points"][0]["state"], "failed")  # not "running" forever
        self.assertIn("is a folder, not a claim", status["points"][0]["error"])
        self.assertEqual([p.name for p in (folder / "claims").iterdir()], [points[0]["id"] + ".json"])
        (folder / "claims" / (points[0]["id"] + ".json")).rmdir()
        self.assertEqual(limited_run("sweep", "run", str(folder), "--quiet").returncode, 0)

    def test_a_text_file_too_large_to_hold_is_refused_before_reading(self):
        huge = self.tmp / "huge.txt"
        with open(huge, "wb") as out:
            out.truncate(1100 << 20)  # sparse: 1100 MiB declared, nothing stored
        self.expect_refused(["train", "--preset", "quickstart", *TINY, "--steps", "2", "--set", "data.task=text",
                             "--set", f"data.text_path={huge}", "--out", str(self.tmp / "t")], "1100 MiB",
                            "at most 1024 MiB")

    def test_resuming_past_a_line_too_long_to_hold_keeps_the_history_before_it(self):
        out = self.trained_run("long-line", "--set", "train.checkpoint_every=2")
        lines = (out / "metrics.jsonl").read_text().splitlines()
        with open(out / "metrics.jsonl", "ab") as metrics:
            metrics.truncate(metrics.tell() + (800 << 20))  # an 800 MB line of zeros, sparse, no newline
        # In a process of its own, so its peak resident memory is this resume's alone.
        measure = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True); "
                   "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
        result = subprocess.run([sys.executable, "-c", measure, test_cli.CLI, "train", "--resume",
                                 str(out / "model.safetensors"), "--out", str(out), "--steps", "4"],
                                capture_output=True, text=True, timeout=300)
        code, peak_kb = (int(x) for x in result.stdout.split())
        self.assertEqual(code, 0, result.stderr[-2000:])
        self.assertLess(peak_kb, 600 << 10, "the long line was held whole")  # the line alone is 800 MB
        kept = [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()]
        self.assertEqual(kept, [json.loads(line)["step"] for line in lines] + [3, 4])

    def test_runs_trusts_the_checkpoint_files_step_over_the_summary(self):
        out = self.trained_run("ckpt-step", "--set", "train.checkpoint_every=1")
        self.assertEqual(test_cli.safetensors_metadata(out / "model.safetensors")["normlab_step"], "2")
        summary = json.loads((out / "summary.json").read_text())
        summary["checkpoint_step"] = 1  # one interval behind, as a kill between the two writes leaves it
        (out / "summary.json").write_text(json.dumps(summary))
        listed = json.loads(limited_run("runs", str(out), "--json").stdout)
        self.assertEqual(listed[0]["checkpoint_step"], 2)
        blob = (out / "model.safetensors").read_bytes()
        (out / "model.safetensors").write_bytes(blob[:len(blob) // 2])  # cut short: nothing to resume from
        listed = json.loads(limited_run("runs", str(out), "--json").stdout)
        self.assertIsNone(listed[0]["checkpoint_step"])


if __name__ == "__main__":
    sys.exit(test_cli.main(__doc__))
