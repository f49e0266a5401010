#!/usr/bin/env python3
"""`sweep edge`: a real bisection of train.lr for two norm types on a tiny model, killed mid-search and
resumed (finished probes are not run again, every probe's steps run once), its brackets checked
against the probes' own summary.json files and the bisection replayed by hand, the report's edge and
paired ratio recomputed from the brackets with the t table; `sweep run S` continues an edge folder;
bad input is exit code 2 naming what to change. Standard library only."""
import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import test_cli
from test_cli import TINY, CliTestCase, run
from test_seed_groups import T975

STEPS = 30
# Between 1e-3 (trains) and 3 (diverges at step 2 or 3 on this model), to 10%: 9 probes per search.
EDGE = ["sweep", "edge", "--preset", "quickstart", *TINY, "--steps", str(STEPS), "--axis", "train.lr=1e-3:3",
        "--vary", "model.norm_type=layernorm,rmsnorm", "--criterion", "diverged", "--seeds", "2",
        "--tolerance", "10%", "--jobs", "2", "--quiet"]


def midpoint(low, high):
    """The geometric midpoint rounded to 4 significant digits, as the bisection takes it."""
    return float(f"{math.sqrt(low * high):.3e}")


def probes_of(search):
    """value -> summary.json of every finished probe of one search's sweep folder."""
    plan = json.loads((search / "sweep.json").read_text())
    found = {}
    for point in plan["points"]:
        summary = search / "runs" / point["id"] / "summary.json"
        if summary.exists() and json.loads(summary.read_text())["status"] in ("completed", "diverged"):
            found[point["set"]["train.lr"]] = json.loads(summary.read_text())
    return found


class SweepEdge(CliTestCase):
    def metrics_files(self, edge):
        """metrics.jsonl of every finished probe (its summary.json says completed or diverged)."""
        found = {}
        for summary in edge.glob("searches/*/runs/*/summary.json"):
            if json.loads(summary.read_text())["status"] in ("completed", "diverged"):  # metrics final
                found[str(summary.parent.relative_to(edge))] = (summary.parent / "metrics.jsonl").read_bytes()
        return found

    def replay(self, search, low, high):
        """The bisection by hand from the probes' summaries: the bracket and the values probed."""
        probes = probes_of(search)
        passed = {value: summary["status"] == "completed" for value, summary in probes.items()}
        self.assertTrue(passed[low], f"{search}: LO must train")
        self.assertFalse(passed[high], f"{search}: HI must diverge")
        probed = [low, high]
        while high / low > 1.1:
            middle = midpoint(low, high)
            probed.append(middle)
            low, high = (middle, high) if passed[middle] else (low, middle)
        self.assertEqual(sorted(probed), sorted(probes), f"{search}: probes other than the bisection's")
        return low, high, probed

    def test_edge_search_survives_a_kill_and_reports_what_its_probes_say(self):
        edge = self.tmp / "edge"
        # Killed (with its workers left running) once a few probes have finished.
        driver = subprocess.Popen([test_cli.CLI, *EDGE, "--out", str(edge)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while time.time() < deadline and len(self.metrics_files(edge)) < 10:
            time.sleep(0.02)
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        before = self.metrics_files(edge)
        self.assertGreaterEqual(len(before), 10)
        self.assertFalse((edge / "edge_result.json").exists(), "the search ended before the kill")

        result = json.loads(run(*EDGE, "--out", str(edge), "--json", check_rc=0).stdout)
        after = self.metrics_files(edge)
        for probe, metrics in before.items():
            self.assertEqual(after[probe], metrics, f"{probe}: a finished probe was run again")
        for probe, metrics in after.items():
            steps = [json.loads(line)["step"] for line in metrics.decode().splitlines()]
            self.assertEqual(steps, list(range(1, len(steps) + 1)), f"{probe}: steps run twice")
        self.assertEqual(result, json.loads((edge / "edge_result.json").read_text()))
        self.assertTrue(result["finished"])
        self.check_report(edge, result)
        # Continuing a finished search runs nothing and reports the same; so does `sweep run S`.
        again = json.loads(run("sweep", "edge", str(edge), "--json", check_rc=0).stdout)
        self.assertEqual(again, result)
        run("sweep", "run", str(edge), "--quiet", check_rc=0)
        self.assertEqual(self.metrics_files(edge), after)
        self.assertIn("is an edge search", run("sweep", "status", str(edge), check_rc=2).stderr)

    def check_report(self, edge, result):
        logs = {}
        for variant in result["variants"]:
            self.assertEqual([s["seed"] for s in variant["seeds"]], [1, 2])
            for seed in variant["seeds"]:
                search = edge / seed["folder"]
                last_pass, first_fail, probed = self.replay(search, 1e-3, 3.0)
                self.assertEqual(seed["status"], "bracketed")
                self.assertEqual((seed["last_pass"], seed["first_fail"]), (last_pass, first_fail))
                self.assertLessEqual(first_fail / last_pass, 1.1)
                self.assertEqual([p["value"] for p in seed["probes"]], probed)
                self.assertEqual(len(probed), 9)
                logs.setdefault(variant["label"], []).append(math.log(last_pass))
            mean = sum(logs[variant["label"]]) / 2
            self.assertAlmostEqual(variant["edge"]["value"], math.exp(mean), places=12)
            sd = math.sqrt(sum((v - mean) ** 2 for v in logs[variant["label"]]))
            if sd > 0:
                half = T975[1] * sd / math.sqrt(2)
                self.assertAlmostEqual(variant["edge"]["ci95"][0], math.exp(mean - half), places=6)
                self.assertAlmostEqual(variant["edge"]["ci95"][1], math.exp(mean + half), places=6)
        self.assertEqual([v["label"] for v in result["variants"]], ["layernorm", "rmsnorm"])
        (ratio,) = result["ratios"]
        self.assertEqual((ratio["label"], ratio["reference"], ratio["n"]), ("rmsnorm", "layernorm", 2))
        differences = [b - a for a, b in zip(logs["layernorm"], logs["rmsnorm"])]
        self.assertAlmostEqual(ratio["value"], math.exp(sum(differences) / 2), places=12)

    def test_an_edge_outside_the_range_is_reported_not_bisected(self):
        edge = self.tmp / "edge"
        out = run("sweep", "edge", "--preset", "quickstart", *TINY, "--steps", "10", "--axis", "train.lr=3:10",
                  "--criterion", "diverged", "--out", str(edge), "--quiet", check_rc=0).stdout
        self.assertIn("the edge is below LO (LO fails) for seeds 1: lower LO", out)
        result = json.loads((edge / "edge_result.json").read_text())
        (seed,) = result["variants"][0]["seeds"]
        self.assertEqual((seed["status"], seed["first_fail"], len(seed["probes"])), ("below_low", 3.0, 2))
        self.assertIsNone(result["variants"][0]["edge"])
        self.assertEqual(result["ratios"], [])

    def test_bad_input_names_what_to_change(self):
        out = str(self.tmp / "e")
        base = ["sweep", "edge", "--preset", "quickstart", "--steps", "5", "--out", out]
        self.expect_bad_input([*base, "--axis", "train.lr=0.1:0.01", "--criterion", "diverged"],
                              "LO must be below HI")
        self.expect_bad_input([*base, "--axis", "train.lr=0:0.01", "--criterion", "diverged"], "positive")
        self.expect_bad_input([*base, "--axis", "train.lr=1e-3,1e-2", "--criterion", "diverged"], "KEY=LO:HI")
        self.expect_bad_input([*base, "--axis", "train.lr=1e-3:1e-2", "--criterion", "exploded"],
                              "not a criterion", "loss_above=X")
        self.expect_bad_input([*base, "--axis", "train.lr=1e-3:1e-2", "--criterion", "worse_than_best=0.5"],
                              "F must be a factor above 1")
        self.expect_bad_input([*base, "--axis", "train.warmup_steps=1:100", "--criterion", "diverged"],
                              "real-valued config key")
        self.expect_bad_input([*base, "--axis", "train.lr=1e-3:1e-2"], "--criterion is required")
        self.expect_bad_input([*base, "--axis", "train.lr=1e-3:1e-2", "--criterion", "diverged", "--tolerance",
                               "0.01%"], "--tolerance")
        self.expect_bad_input([*base, "--axis", "train.lr=1e-3:1e-2", "--criterion", "diverged", "--vary",
                               "train.lr=1,2"], "--vary train.lr is the key searched")
        self.assertFalse(Path(out).exists(), "refused input left a folder")
        self.expect_bad_input(["sweep", "edge", str(self.tmp / "none")], "not an edge search folder")
        # A search already planned cannot be changed by continuing it: refused, not silently ignored.
        planned = self.tmp / "planned"
        planned.mkdir()
        (planned / "edge.json").write_text(json.dumps({
            "format": "normlab-edge", "version": 1, "base": {"preset": "quickstart"}, "steps": 5,
            "axis": {"key": "train.lr", "low": 0.001, "high": 0.01}, "seeds": [1], "criterion": "diverged",
            "tolerance": 0.05}))
        self.expect_bad_input(["sweep", "edge", str(planned), "--seeds", "5"], "--seeds cannot change a search")
        self.assertFalse((planned / "searches").exists(), "a refused continuation ran probes")
        # A run's folder is not overlaid with a search: refused, the run's files as they were.
        trained = self.tmp / "trained"
        run("train", "--preset", "quickstart", *TINY, "--steps", "2", "--out", str(trained), check_rc=0)
        before = sorted(p.name for p in trained.iterdir())
        self.expect_bad_input(["sweep", "edge", "--preset", "quickstart", "--steps", "2", "--axis",
                               "train.lr=1e-3:1", "--criterion", "diverged", "--out", str(trained)],
                              "holds a run (summary.json)", "folder of its own")
        self.assertEqual(sorted(p.name for p in trained.iterdir()), before)


if __name__ == "__main__":
    sys.exit(test_cli.main(__doc__))
