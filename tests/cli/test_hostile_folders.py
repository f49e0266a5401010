#!/usr/bin/env python3
"""normlab-cli against hostile files (issue 31): JSON nested 50,000 levels deep in every file and flag
that takes JSON, FIFOs and links to /dev/zero in place of small files, a symlink loop among run folders,
a sparse 4 GB checkpoint, and links planted where exports write. Each must give exit code 2 (or a
listing with a note), never a crash, a hang (every run has a timeout), an allocation of gigabytes (run
under a 2 GB address-space limit) or a write through a planted link."""
import argparse
import json
import os
import resource
import struct
import subprocess
import sys
import unittest
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

def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cli", required=True)
    args, rest = parser.parse_known_args()
    test_cli.CLI = os.path.abspath(args.cli)
    program = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=1)
    result = program.result
    failed = len(result.failures) + len(result.errors)
    print(f"{result.testsRun - failed} passed, {failed} failed")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
