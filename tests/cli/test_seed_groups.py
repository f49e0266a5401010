#!/usr/bin/env python3
"""Seed groups and comparisons (issue 33): `train --seeds` writes one run per seed and group.json, a re-run
skips the finished seeds, and `compare` gives each group's mean, sd and Student t interval and B - A
(paired by seed, else Welch), checked here against the numbers computed from the folders' own files;
`sweep extend` adds seeds and axis values to a sweep in place, its finished points untouched, and a
worker killed while running the new points leaves each point run once. Bad input is exit code 2 with a
message. Standard library only."""
import csv
import itertools
import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import test_cli
from test_cli import TINY, CliTestCase, run

# Two-sided 95% Student t quantiles t_{0.975, dof} (the t table).
T975 = {1: 12.7062047, 2: 4.3026527, 3: 3.1824463, 4: 2.7764451, 5: 2.5705818, 6: 2.4469119, 7: 2.3646243,
        8: 2.3060041, 9: 2.2621572, 10: 2.2281389}
STEPS = ["--steps", "12", "--quiet"]


def mean_sd(values):
    n = len(values)
    mean = sum(values) / n
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


def t_interval(values):
    """Mean, sd and the 95% t interval with n - 1 dof, computed by hand."""
    mean, sd = mean_sd(values)
    half = T975[len(values) - 1] * sd / math.sqrt(len(values))
    return mean, sd, (mean - half, mean + half)


def summary(folder):
    return json.loads((Path(folder) / "summary.json").read_text())


def loss_at(folder, step):
    """The loss metrics.jsonl holds for `step` (its last line for that step)."""
    found = None
    for line in (Path(folder) / "metrics.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["step"] == step:
            found = record["loss"]
    return found


class SeedGroups(CliTestCase):
    def train_group(self, name, seeds, *extra, check_rc=0):
        return run("train", *TINY, *STEPS, *extra, "--seeds", seeds, "--out", str(self.tmp / name), check_rc=check_rc)

    def compare(self, a, b, *extra, check_rc=0):
        result = run("compare", "--run", str(self.tmp / a), "--run", str(self.tmp / b), "--json", *extra,
                     check_rc=check_rc)
        return json.loads(result.stdout)

    def assert_group(self, reported, values):
        mean, sd, (low, high) = t_interval(values)
        self.assertEqual(reported["n"], len(values))
        self.assertAlmostEqual(reported["mean"], mean, places=12)
        self.assertAlmostEqual(reported["sd"], sd, places=12)
        self.assertAlmostEqual(reported["ci"][0], low, places=6)
        self.assertAlmostEqual(reported["ci"][1], high, places=6)

    def test_group_folders_and_paired_comparison(self):
        self.train_group("a", "3")
        self.train_group("b", "1-3", "--set", "train.lr=0.003")
        group = json.loads((self.tmp / "a" / "group.json").read_text())
        self.assertEqual(group["format"], "normlab-group")
        self.assertEqual(group["seeds"], [1, 2, 3])
        self.assertEqual([r["folder"] for r in group["runs"]], ["seed-1", "seed-2", "seed-3"])
        self.assertNotIn("seed", group["config"]["train"])
        self.assertEqual(group["config"]["train"]["steps"], 12)
        losses = {}
        for name in ("a", "b"):
            losses[name] = []
            for seed in (1, 2, 3):
                folder = self.tmp / name / f"seed-{seed}"
                self.assertEqual(json.loads((folder / "config.json").read_text())["train"]["seed"], seed)
                self.assertEqual(summary(folder)["status"], "completed")
                losses[name].append(summary(folder)["final_val_loss"])
        self.assertEqual(len(set(losses["a"])), 3, "each seed trains a different run")
        out = self.compare("a", "b")
        self.assertEqual(out["metric"], "final_val_loss")
        self.assert_group(out["a"], losses["a"])
        self.assert_group(out["b"], losses["b"])
        difference = out["difference"]
        self.assertEqual(difference["kind"], "paired")
        self.assert_group(difference, [b - a for a, b in zip(losses["a"], losses["b"])])
        text = run("compare", "--run", str(self.tmp / "a"), "--run", str(self.tmp / "b"), check_rc=0).stdout
        self.assertIn("paired by seed", text)
        self.assertIn(f"{difference['mean']:.6g}", text)

    def test_welch_when_seeds_differ_and_a_field_at_a_step(self):
        self.train_group("a", "1,2,3")
        self.train_group("b", "4-5", "--set", "train.lr=0.003")
        out = self.compare("a", "b", "--metric", "loss@12")
        a = [loss_at(self.tmp / "a" / f"seed-{s}", 12) for s in (1, 2, 3)]
        b = [loss_at(self.tmp / "b" / f"seed-{s}", 12) for s in (4, 5)]
        self.assert_group(out["a"], a)
        self.assert_group(out["b"], b)
        difference = out["difference"]
        self.assertEqual(difference["kind"], "welch")
        self.assertIn("seeds differ", difference["why"])
        (mean_a, sd_a), (mean_b, sd_b) = mean_sd(a), mean_sd(b)
        va, vb = sd_a ** 2 / 3, sd_b ** 2 / 2
        dof = (va + vb) ** 2 / (va ** 2 / 2 + vb ** 2 / 1)
        self.assertAlmostEqual(difference["mean"], mean_b - mean_a, places=12)
        self.assertAlmostEqual(difference["dof"], dof, places=9)
        # The t quantile of a fractional dof lies between the table's neighbours (t falls with dof).
        self.assertLessEqual(difference["t"], T975[math.floor(dof)] + 1e-9)
        self.assertGreaterEqual(difference["t"], T975[math.ceil(dof)] - 1e-9)
        half = difference["t"] * math.sqrt(va + vb)
        self.assertAlmostEqual(difference["ci"][0], mean_b - mean_a - half, places=9)
        text = run("compare", "--run", str(self.tmp / "a"), "--run", str(self.tmp / "b"), check_rc=0).stdout
        self.assertIn("unpaired (Welch", text)

    def test_one_run_has_no_interval(self):
        for name in ("x", "y"):
            run("train", *TINY, *STEPS, "--out", str(self.tmp / name), check_rc=0)
        out = self.compare("x", "y")
        self.assertEqual(out["a"]["n"], 1)
        self.assertIsNone(out["a"]["ci"])
        self.assertEqual(out["a"]["ci_note"], "n/a, one seed")
        self.assertEqual(out["difference"]["kind"], "paired")  # both seed 1
        self.assertIsNone(out["difference"]["ci"])
        self.assertAlmostEqual(out["difference"]["mean"], 0.0, places=12)  # the same run twice
        text = run("compare", "--run", str(self.tmp / "x"), "--run", str(self.tmp / "y"), check_rc=0).stdout
        self.assertIn("95% CI n/a, one seed", text)

    def test_diverged_and_unfinished_runs_are_counted_not_averaged(self):
        self.train_group("a", "3")
        self.train_group("b", "3", "--set", "train.lr=0.003")
        diverged = self.tmp / "b" / "seed-2" / "summary.json"
        record = summary(diverged.parent)
        record.update(status="diverged", final_val_loss=None, diverged_at=7)
        diverged.write_text(json.dumps(record))
        stopped = self.tmp / "a" / "seed-3" / "summary.json"
        stopped.write_text(json.dumps(dict(summary(stopped.parent), status="stopped")))
        out = self.compare("a", "b")
        self.assertEqual((out["b"]["n"], out["b"]["diverged"], out["b"]["unfinished"]), (2, 1, 0))
        self.assertEqual((out["a"]["n"], out["a"]["diverged"], out["a"]["unfinished"]), (2, 0, 1))
        self.assertEqual(out["difference"]["kind"], "paired")
        self.assertEqual(out["difference"]["n"], 1)
        self.assertEqual(out["difference"]["pairs_left_out"], 2)
        self.assertIsNone(out["difference"]["ci"])
        self.assert_group(out["b"], [summary(self.tmp / "b" / f"seed-{s}")["final_val_loss"] for s in (1, 3)])
        text = run("compare", "--run", str(self.tmp / "a"), "--run", str(self.tmp / "b"), check_rc=0).stdout
        self.assertIn("left out (diverged)", text)
        self.assertIn("diverged at step 7", text)

    def test_rerun_skips_finished_seeds_and_refuses_other_settings(self):
        self.train_group("g", "3")
        kept = (self.tmp / "g" / "seed-1" / "metrics.jsonl").stat().st_mtime_ns
        killed = self.tmp / "g" / "seed-2" / "summary.json"
        killed.write_text(json.dumps(dict(summary(killed.parent), status="running")))
        result = self.train_group("g", "3")
        self.assertIn("seed-1 already finished; skipped", result.stderr)
        self.assertIn("seed-3 already finished; skipped", result.stderr)
        self.assertEqual(summary(killed.parent)["status"], "completed")
        self.assertEqual((self.tmp / "g" / "seed-1" / "metrics.jsonl").stat().st_mtime_ns, kept)
        self.expect_bad_input(["train", *TINY, *STEPS, "--set", "train.lr=0.003", "--seeds", "3", "--out",
                               str(self.tmp / "g")], "another config", "train.lr")
        self.expect_bad_input(["train", *TINY, *STEPS, "--seeds", "4", "--out", str(self.tmp / "g")],
                              "seeds 1,2,3, not 1,2,3,4")
        self.train_group("g", "3", "--overwrite")
        self.assertGreater((self.tmp / "g" / "seed-1" / "metrics.jsonl").stat().st_mtime_ns, kept)

    def test_bad_seeds_and_compare_input(self):
        out = str(self.tmp / "bad")
        for seeds, fragment in (("0", "names no seed"), ("5-3", "empty range"), ("101", "at most 100"),
                                ("1-200", "at most 100"), ("1,2,1", "seed 1 twice"), ("x", "'x' is not a seed"),
                                ("1-", "'' is not a seed")):
            self.expect_bad_input(["train", *TINY, "--seeds", seeds, "--out", out], fragment)
            self.assertFalse(Path(out).exists())
        self.expect_bad_input(["train", "--resume", out + "/model.safetensors", "--seeds", "2", "--out", out],
                              "cannot be combined with --resume")
        self.expect_bad_input(["train", *TINY, "--seeds", "2", "--change", "999999:train.lr=1", "--out", out],
                              "999999")
        self.assertFalse(Path(out).exists())
        no_val = str(self.tmp / "noval")
        run("train", *TINY, *STEPS, "--set", "telemetry.val_every=0", "--out", no_val, check_rc=0)
        self.expect_bad_input(["compare", "--run", no_val, "--run", no_val], "no final_val_loss", "it has final_loss")
        self.expect_bad_input(["compare", "--run", no_val, "--run", no_val, "--metric", "loss@99"],
                              "no step 99", "1, 2, 3, ..., 12 (12 steps)")
        self.expect_bad_input(["compare", "--run", no_val, "--run", no_val, "--metric", "val_loss@5"],
                              "no val_loss at step 5")
        self.expect_bad_input(["compare", "--run", no_val, "--run", no_val, "--metric", "bogus@5"],
                              "not a metric", "grad_norm")
        self.expect_bad_input(["compare", "--run", no_val, "--run", no_val, "--metric", "loss"], "loss@STEP")
        self.expect_bad_input(["compare"], "give --run once", "or twice")
        self.expect_bad_input(["compare", "--run", no_val, "--run", no_val, "--run", no_val], "got 3")
        self.expect_bad_input(["compare", "--run", no_val, "--run", str(self.tmp / "none"), "--metric", "final_loss"],
                              "none does not exist")

    def test_extremes_over_blocks_a_probe_file_and_one_group(self):
        self.train_group("a", "1-3")
        folders = [self.tmp / "a" / f"seed-{seed}" for seed in (1, 2, 3)]
        lines = [[json.loads(line) for line in (f / "metrics.jsonl").read_text().splitlines()] for f in folders]
        # max: over every logged step and every block; min: of a run-level field over the steps.
        largest = [max(layer["attn_max_logit"] for record in run_lines for layer in record.get("layers", []))
                   for run_lines in lines]
        smallest = [min(record["loss"] for record in run_lines) for run_lines in lines]
        for metric, values in (("max:attn_max_logit", largest), ("min:loss", smallest)):
            out = json.loads(run("compare", "--run", str(self.tmp / "a"), "--metric", metric, "--json",
                                 check_rc=0).stdout)
            self.assertEqual(out["metric"], metric)
            self.assertNotIn("b", out, "one --run: that group's estimate alone")
            self.assertNotIn("difference", out)
            self.assert_group(out["a"], values)
            self.assertEqual([r["value"] for r in out["a"]["runs"]], values)
        # A number a probe wrote into each run folder, by a dotted key path (array items by index).
        written = [0.25, 0.5, 1.5]
        for folder, value in zip(folders, written):
            (folder / "probe_out.json").write_text(json.dumps({"all": {"items": [7, value]}, "text": "x"}))
        out = json.loads(run("compare", "--run", str(self.tmp / "a"), "--metric", "probe_out.json:all.items.1",
                             "--json", check_rc=0).stdout)
        self.assert_group(out["a"], written)
        text = run("compare", "--run", str(self.tmp / "a"), "--metric", "probe_out.json:all.items.1",
                   check_rc=0).stdout
        self.assertIn("metric: probe_out.json:all.items.1", text)
        self.assertNotIn("B - A", text)
        group = str(self.tmp / "a")
        for metric, fragments in (("max:bogus", ["'bogus' is not a field", "attn_max_logit"]),
                                  ("../x.json:a", ["must be a file name inside the run folder"]),
                                  ("probe_out.json:", ["give the number's key"]),
                                  ("probe_out.json:all..items", ["give the number's key"]),
                                  ("missing.json:a", ["has no missing.json", "probe --freeze-norms"]),
                                  ("probe_out.json:all.zz", ["all has no 'zz'", "keys items"]),
                                  ("probe_out.json:all.items.9", ["has no '9'", "2 items"]),
                                  ("probe_out.json:text", ["not a number"])):
            self.expect_bad_input(["compare", "--run", group, "--metric", metric], *fragments)


class SweepExtend(CliTestCase):
    STEPS = 30

    def point_files(self, sweep):
        """Each point's metrics.jsonl bytes, by point id."""
        return {folder.name: (folder / "metrics.jsonl").read_bytes() for folder in (sweep / "runs").iterdir()
                if (folder / "metrics.jsonl").exists()}

    def test_extend_adds_points_keeps_the_finished_and_survives_a_kill(self):
        sweep = self.tmp / "s"
        run("sweep", "plan", "--preset", "quickstart", *TINY, "--axis", "train.lr=1e-3,3e-3", "--steps",
            str(self.STEPS), "--out", str(sweep), check_rc=0)
        run("sweep", "run", str(sweep), "--jobs", "2", "--quiet", check_rc=0)
        before = self.point_files(sweep)
        planned = [point["id"] for point in json.loads((sweep / "sweep.json").read_text())["points"]]
        self.assertEqual(len(before), 2)

        out = run("sweep", "extend", str(sweep), "--seeds", "3", "--axis", "train.lr=1e-2", check_rc=0).stdout
        self.assertIn("2 -> 9 points", out)
        points = json.loads((sweep / "sweep.json").read_text())["points"]
        self.assertEqual(len(points), 9)  # 3 lr values x 3 seeds
        self.assertTrue(set(planned) <= {point["id"] for point in points}, "a planned point changed its id")
        status = run("sweep", "status", str(sweep), check_rc=0).stdout
        self.assertIn("9 points: 2 done", status)

        # A worker killed while it runs the new points; a second run finishes them, each once.
        worker = subprocess.Popen([test_cli.CLI, "sweep", "run", str(sweep), "--jobs", "1", "--quiet"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while time.time() < deadline and len(self.point_files(sweep)) < 4:
            time.sleep(0.05)
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        run("sweep", "run", str(sweep), "--jobs", "2", "--quiet", check_rc=0)
        self.assertIn("9 points: 9 done", run("sweep", "status", str(sweep), check_rc=0).stdout)
        after = self.point_files(sweep)
        for point_id, metrics in before.items():
            self.assertEqual(after[point_id], metrics, f"{point_id}: a finished point was run again")
        for point_id, metrics in after.items():
            steps = [json.loads(line)["step"] for line in metrics.decode().splitlines()]
            self.assertEqual(steps, list(range(1, self.STEPS + 1)), f"{point_id}: steps run twice or missing")
        self.check_sensitivity_interval(sweep)

    def check_sensitivity_interval(self, sweep):
        """collect's lr sensitivity over 3 seeds: the value from points.csv by hand, and its bootstrap
        interval inside the range the 27 possible resamples of 3 seeds can give."""
        run("sweep", "collect", str(sweep), check_rc=0)
        by_lr = {}
        for row in csv.DictReader((sweep / "points.csv").read_text().splitlines()):
            final = float(row["final_val_loss"] or row["final_loss"])
            clamped = min(final, float(row["initial_loss"]))
            by_lr.setdefault(float(row["train.lr"]), {})[int(row["seed"])] = clamped
        seeds = sorted(next(iter(by_lr.values())))

        def sensitivity(chosen):
            means = [sum(values[s] for s in chosen) / len(chosen) for values in by_lr.values()]
            return sum(means) / len(means) - min(means)

        row = next(csv.DictReader((sweep / "lr_sensitivity.csv").read_text().splitlines()))
        self.assertAlmostEqual(float(row["lr_sensitivity"]), sensitivity(seeds), places=9)
        possible = [sensitivity(chosen) for chosen in itertools.product(seeds, repeat=len(seeds))]
        low, high = float(row["lr_sensitivity_ci95_low"]), float(row["lr_sensitivity_ci95_high"])
        self.assertLessEqual(low, high)
        self.assertGreaterEqual(low, min(possible) - 1e-12)
        self.assertLessEqual(high, max(possible) + 1e-12)

    def test_extend_refuses_what_would_change_points(self):
        sweep = self.tmp / "s"
        run("sweep", "plan", "--preset", "quickstart", *TINY, "--axis", "train.lr=1e-3", "--steps", "5",
            "--out", str(sweep), check_rc=0)
        plan = (sweep / "sweep.json").read_bytes()
        self.expect_bad_input(["sweep", "extend", str(sweep), "--axis", "model.layers=3"], "no such axis")
        self.expect_bad_input(["sweep", "extend", str(sweep), "--axis", "train.lr=1e-3"], "nothing to add")
        self.expect_bad_input(["sweep", "extend", str(sweep)], "--seeds")
        self.expect_bad_input(["sweep", "extend", str(self.tmp / "none"), "--seeds", "2"], "not a sweep folder")
        self.assertEqual((sweep / "sweep.json").read_bytes(), plan, "a refused extension changed sweep.json")


if __name__ == "__main__":
    sys.exit(test_cli.main(__doc__))
