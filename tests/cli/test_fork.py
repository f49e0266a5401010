#!/usr/bin/env python3
"""normlab-cli train --fork RUN_DIR --at N and train.checkpoint_keep (issue 33): the kept checkpoints a
run folder holds, a fork with no change that retraces its parent bit for bit, a fork with a change that
equals the parent up to N and differs from N+1 on, its provenance and copied history, and bad input."""
import json
import sys

import test_cli
from test_cli import TINY, CliTestCase, run, safetensors_metadata

STEPS = ["--steps", "30", "--set", "train.checkpoint_every=10"]


def losses(folder):
    return {m["step"]: m["loss"] for m in map(json.loads, (folder / "metrics.jsonl").read_text().splitlines())}


class Forks(CliTestCase):
    def train_parent(self, keep="0"):
        parent = self.tmp / "parent"
        run("train", "--preset", "quickstart", *TINY, *STEPS, "--set", f"train.checkpoint_keep={keep}",
            "--change", "5:train.lr=0.002", "--out", str(parent), "--quiet", check_rc=0)
        return parent

    def test_checkpoint_keep_keeps_the_newest_k_under_their_steps(self):
        parent = self.train_parent(keep="2")
        kept = sorted(p.name for p in parent.glob("model-step-*.safetensors"))
        self.assertEqual(kept, ["model-step-20.safetensors", "model-step-30.safetensors"])
        for name, step in (("model-step-20.safetensors", "20"), ("model-step-30.safetensors", "30"),
                           ("model.safetensors", "30")):
            self.assertEqual(safetensors_metadata(parent / name)["normlab_step"], step, name)
        # The newest kept file and model.safetensors are one file on disk (a hard link), not two.
        self.assertEqual((parent / "model-step-30.safetensors").stat().st_ino, (parent / "model.safetensors").stat().st_ino)
        one = self.tmp / "one"
        run("train", "--preset", "quickstart", *TINY, *STEPS, "--out", str(one), "--quiet", check_rc=0)
        self.assertEqual(sorted(p.name for p in one.glob("*.safetensors")), ["model.safetensors"])

    def test_a_fork_without_a_change_retraces_its_parent_bit_for_bit(self):
        parent = self.train_parent()
        self.assertEqual(sorted(p.name for p in parent.glob("model-step-*")),
                         ["model-step-10.safetensors", "model-step-20.safetensors", "model-step-30.safetensors"])
        fork = self.tmp / "fork"
        run("train", "--fork", str(parent), "--at", "20", "--out", str(fork), "--quiet", check_rc=0)
        self.assertEqual(losses(fork), losses(parent))
        self.assertEqual(sorted(losses(fork)), list(range(1, 31)))
        provenance = json.loads((fork / "provenance.json").read_text())
        self.assertEqual(provenance["forked_from"], {"run": str(parent), "step": 20})
        self.assertEqual(provenance["resumed_from"]["step"], 20)
        # The parent's history up to the fork, its change at step 5 among it, is the fork's too.
        events = [json.loads(line) for line in (fork / "events.jsonl").read_text().splitlines()]
        self.assertEqual([(e["step"], e["kind"], e["key"]) for e in events], [(5, "change", "train.lr")])
        self.assertEqual(json.loads((fork / "summary.json").read_text())["status"], "completed")

    def test_a_fork_with_a_change_differs_from_the_next_step_on_and_not_before(self):
        parent = self.train_parent()
        fork = self.tmp / "fork"
        placement = json.loads((parent / "config.json").read_text())["model"]["norm_placement"]
        other = "post" if placement != "post" else "pre"
        run("train", "--fork", str(parent), "--at", "10", "--set", f"model.norm_placement={other}", "--steps", "25",
            "--out", str(fork), "--quiet", check_rc=0)
        mine, theirs = losses(fork), losses(parent)
        self.assertEqual(sorted(mine), list(range(1, 26)))
        self.assertEqual([mine[s] for s in range(1, 11)], [theirs[s] for s in range(1, 11)])
        for step in range(11, 26):
            self.assertNotEqual(mine[step], theirs[step], f"step {step}")
        events = [json.loads(line) for line in (fork / "events.jsonl").read_text().splitlines()]
        self.assertEqual((events[-1]["step"], events[-1]["kind"], events[-1]["key"], events[-1]["value"]),
                         (11, "change", "model.norm_placement", other))
        # The same change planned from step 0 (--change 11:...) trains the same losses: a fork is the
        # run that would have been, which is how a saved experiment replays a fork from scratch.
        planned = self.tmp / "planned"
        run("train", "--preset", "quickstart", *TINY, *STEPS, "--set", "train.checkpoint_keep=0", "--change",
            "5:train.lr=0.002", "--change", f"11:model.norm_placement={other}", "--steps", "25", "--out",
            str(planned), "--quiet", check_rc=0)
        self.assertEqual(losses(planned), mine)
        # A key that is not live applies from the fork on too, through the config it starts with.
        quiet = self.tmp / "quiet"
        run("train", "--fork", str(parent), "--at", "10", "--set", "telemetry.spike_z=9", "--out", str(quiet),
            "--quiet", check_rc=0)
        self.assertEqual(json.loads((quiet / "config.json").read_text())["telemetry"]["spike_z"], 9)
        self.assertEqual(losses(quiet), theirs)

    def test_the_lesson_fork_rescues_the_stuck_run_on_every_seed(self):
        """The first lesson's fix at reduced scale (scripts/lesson_fork.sh is the full one): postln-no-warmup
        on 3 seeds for 300 steps, forked at 100 to Pre-LN. The stuck runs stay near the unigram loss and the
        paired difference's 95% CI lies below -0.3 (measured -0.92 to -0.76 when written; stuck: 2.95-3.21)."""
        stuck, rescued = self.tmp / "stuck", self.tmp / "rescued"
        run("train", "--preset", "postln-no-warmup", "--steps", "300", "--set", "train.checkpoint_every=100",
            "--set", "train.checkpoint_keep=0", "--seeds", "3", "--out", str(stuck), "--quiet", check_rc=0)
        for seed in (1, 2, 3):
            run("train", "--fork", str(stuck / f"seed-{seed}"), "--at", "100", "--set", "model.norm_placement=pre",
                "--out", str(rescued / f"seed-{seed}"), "--quiet", check_rc=0)
        report = json.loads(run("compare", "--run", str(stuck), "--run", str(rescued), "--metric", "final_loss",
                                "--json", check_rc=0).stdout)
        self.assertEqual((report["difference"]["kind"], report["difference"]["n"]), ("paired", 3))
        self.assertGreater(report["a"]["ci"][0], 2.8)
        self.assertLess(report["difference"]["ci"][1], -0.3, report["difference"])

    def test_bad_forks_are_refused_naming_what_to_change(self):
        parent = self.train_parent(keep="2")
        out = self.tmp / "fork"
        self.expect_bad_input(["train", "--fork", str(parent), "--at", "15", "--out", str(out)],
                              "no checkpoint at step 15", "at steps 20, 30", out=out)
        self.expect_bad_input(["train", "--fork", str(parent), "--out", str(out)], "--fork needs --at N", out=out)
        self.expect_bad_input(["train", "--at", "20", "--out", str(out)], "--at N needs --fork RUN_DIR", out=out)
        self.expect_bad_input(["train", "--fork", str(parent), "--at", "20", "--preset", "quickstart", "--out",
                               str(out)], "drop --config / --preset", out=out)
        self.expect_bad_input(["train", "--fork", str(parent), "--at", "30", "--out", str(out)],
                              "nothing to train", "--steps M", out=out)
        self.expect_bad_input(["train", "--fork", str(parent), "--at", "20", "--out", str(parent)],
                              "a folder of its own")
        message = self.expect_bad_input(["train", "--fork", str(parent), "--at", "20", "--set", "model.layers=3",
                                         "--steps", "40", "--out", str(out)], "--set model.layers=3 does not fit",
                                        out=out)
        self.assertNotIn("train.steps", message)  # --steps is not one of the --set values that do not fit
        # a live --set is a change before step 21: a --change of the same key there is refused, not raced
        self.expect_bad_input(["train", "--fork", str(parent), "--at", "20", "--set", "model.norm_placement=peri",
                               "--change", "21:model.norm_placement=post", "--out", str(out)],
                              "two changes of model.norm_placement before step 21", out=out)
        # a key that would change its batches or updates with no change on record: not a fork any more
        for assignment in ("train.seed=5", "train.batch_size=8", "train.optimizer=sgd", "data.val_fraction=0.5"):
            self.expect_bad_input(["train", "--fork", str(parent), "--at", "20", "--set", assignment, "--out",
                                   str(out)], "would change the fork's batches or updates from step 21", out=out)
        # a value out of its range is said as --set says it, not blamed on the model's shape
        message = self.expect_bad_input(["train", "--fork", str(parent), "--at", "20", "--set", "model.bn_momentum=0",
                                         "--out", str(out)], "model.bn_momentum must be a finite number in (0, 1]",
                                        out=out)
        self.assertNotIn("shape", message)
        # a live key's bad value too: said as --set, not as the "--change 21:..." it would become
        message = self.expect_bad_input(["train", "--fork", str(parent), "--at", "20", "--set", "train.lr=-1",
                                         "--out", str(out)], "train.lr", out=out)
        self.assertNotIn("--change", message)
        # fewer blocks than the parent: the checkpoint's extra blocks were dropped without a word before
        self.expect_bad_input(["train", "--fork", str(parent), "--at", "20", "--set", "model.layers=1", "--out",
                               str(out)], "--set model.layers=1 does not fit", "none of", out=out)
        bare = self.tmp / "bare"
        run("train", "--preset", "quickstart", *TINY, "--steps", "3", "--out", str(bare), "--quiet", check_rc=0)
        self.expect_bad_input(["train", "--fork", str(bare), "--at", "3", "--out", str(out)],
                              "holds no checkpoint", "train.checkpoint_keep=0", out=out)
        self.expect_bad_input(["train", "--fork", str(self.tmp / "nope"), "--at", "3", "--out", str(out)],
                              "is not a run folder (it does not exist)", out=out)
        self.assertEqual(sorted(losses(parent)), list(range(1, 31)))  # the parent is untouched


if __name__ == "__main__":
    sys.exit(test_cli.main(__doc__))
