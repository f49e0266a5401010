#!/usr/bin/env python3
"""The claims table's script (scripts/measure_claims.py, issue 33) at reduced scale: two of the README's
"holds" claims measured on 3 seeds with shortened runs must still hold, with the numbers it prints equal
to `normlab-cli compare`'s on the same folders; and a verdict follows from its checks' statuses as the
script's docstring says. The "does not" claims' reduced-scale checks are tests/engine/test_presets.cpp's.
Standard library only."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import test_cli
from test_cli import CliTestCase

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "measure_claims.py"


def load_script():
    spec = importlib.util.spec_from_file_location("measure_claims", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Claims(CliTestCase):
    def measure(self, claim, steps):
        document = self.tmp / f"{claim}.json"
        result = subprocess.run([sys.executable, str(SCRIPT), "--cli", test_cli.CLI, "--claim", claim, "--seeds", "3",
                                 "--steps", str(steps), "--out", str(self.tmp / claim), "--json", str(document)],
                                capture_output=True, text=True, timeout=900)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(document.read_text())["claims"][0], result.stdout

    def test_reduced_scale_verdicts_hold_and_match_compare(self):
        # The lengths tests/engine/test_presets.cpp checks these contrasts at.
        for claim, steps in (("warmup", 200), ("qk-logits", 150)):
            measured, table = self.measure(claim, steps)
            self.assertEqual(measured["verdict"], "holds at laptop scale (n=3)", table)
            self.assertIn(f"holds at laptop scale (n=3)", table)
            for check in measured["checks"]:
                self.assertEqual(check["status"], "holds", check["text"])
                numbers = check["numbers"]
                a, b = numbers["a"]["path"], numbers["b"]["path"]
                direct = json.loads(test_cli.run("compare", "--run", a, "--run", b, "--metric", numbers["metric"],
                                                 "--json", check_rc=0).stdout)
                self.assertEqual(direct["difference"]["ci"], numbers["difference"]["ci"])
                self.assertEqual(numbers["difference"]["kind"], "paired")
                self.assertEqual(numbers["a"]["n"], 3)

    def test_bad_input_is_exit_2_before_any_run(self):
        for args, fragment in ((["--seeds", "1"], "one seed has no interval"), (["--jobs", "0"], "--jobs must be"),
                               (["--steps", "0"], "--steps must be at least 1"), (["--claim", "nope"], "invalid choice"),
                               (["--cli", str(self.tmp / "missing")], "build NormLab first"),
                               (["--json", str(self.tmp / "no" / "x.json")], "its folder does not exist")):
            cli = [] if "--cli" in args else ["--cli", test_cli.CLI]
            result = subprocess.run([sys.executable, str(SCRIPT), *cli, *args, "--out", str(self.tmp / "bad")],
                                    capture_output=True, text=True, timeout=60)
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertIn(fragment, result.stderr, args)
            self.assertFalse((self.tmp / "bad").exists(), args)

    def test_verdict_from_statuses(self):
        script = load_script()
        self.assertEqual(script.verdict(["holds", "holds"], 5), "holds at laptop scale (n=5)")
        self.assertEqual(script.verdict(["holds", "inconclusive"], 5), "inconclusive at n=5")
        self.assertEqual(script.verdict(["holds", "opposite"], 5), "does not hold at laptop scale (n=5)")
        self.assertEqual(script.verdict(["inconclusive", "no effect"], 5), "does not hold at laptop scale (n=5)")
        self.assertEqual(script.verdict(["not seen", "holds"], 5), "not seen at n=5")
        # The README's claims table and the script name the same claims, each with at least one check.
        ids = [claim.id for claim in script.CLAIMS]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertTrue(all(claim.checks for claim in script.CLAIMS))
        readme = (SCRIPT.parents[1] / "README.md").read_text().split("**Published claims at laptop scale**")[1]
        rows = [line for line in readme.split("\n\n")[1].splitlines() if line.startswith("| ")][1:]
        self.assertEqual([row.split(" | ")[0][2:] for row in rows], [claim.claim for claim in script.CLAIMS])


if __name__ == "__main__":
    sys.exit(test_cli.main(__doc__))
