#!/usr/bin/env python3
"""Re-measures the README's table of published claims across seeds and prints it with intervals and a
verdict per claim. Each claim is a few checks, each a controlled experiment run by normlab-cli: seed
groups (`train --seeds`, one thread per run, --jobs at a time) compared with `compare` (B - A paired by
seed, 95% Student t interval), the learning-rate sensitivity of a `sweep` (95% bootstrap interval over
seeds), the paired edge ratio of a `sweep edge`, or a group's `probe --freeze-norms` numbers. The
statistics are normlab-cli's; this script only runs it and words the outcome.

A check *holds* when its interval lies on the claimed side; it *goes the other way* when the interval
lies on the other side; it shows *no effect* when a paired difference's interval lies inside the
check's margin (a gap smaller than that is none at this scale); else it is *inconclusive*. A claim holds
when all its checks hold, does not when one goes the other way or shows no effect, is "not seen" when
the phenomenon it is about never happens here, and is inconclusive otherwise.

  python3 scripts/measure_claims.py --seeds 5 --out claims-runs        # every claim: ~40 min on 2 cores
  python3 scripts/measure_claims.py --claim warmup --seeds 3 --steps 200 --out /tmp/c   # shortened

Running it again with the same --out reuses every finished run, sweep point and probe.
"""
import argparse
import concurrent.futures
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HOLDS, OPPOSITE, NO_EFFECT, INCONCLUSIVE, NOT_SEEN = "holds", "opposite", "no effect", "inconclusive", "not seen"


@dataclass(frozen=True)
class Group:
    """A seed group: `preset` with `sets`, trained once per seed; with `finetune` > 0 each seed's
    checkpoint is also probed with `probe --freeze-norms --finetune-steps finetune`."""
    preset: str
    sets: tuple = ()
    finetune: int = 0

    @property
    def name(self):
        suffix = "".join("_" + s for s in self.sets) + (f"_freeze{self.finetune}" if self.finetune else "")
        return re.sub(r"[^A-Za-z0-9._-]+", "-", self.preset + suffix)

    @property
    def label(self):
        return self.preset + "".join(f" {s}" for s in self.sets)


def fmt(value, signed=False):
    """Two decimals, or three significant digits for large and tiny values; "+" with `signed`."""
    if value is None:
        return "n/a"
    sign = "+" if signed else ""
    return f"{value:{sign}.3g}" if abs(value) >= 100 or 0 < abs(value) < 0.01 else f"{value:{sign}.2f}"


def interval(estimate, signed=False):
    """"mean [low, high]" of a compare estimate (or "mean (no interval: why)" without one)."""
    ci = estimate.get("ci")
    text = fmt(estimate.get("mean"), signed)
    if not ci:
        return f"{text} (no interval: {estimate.get('ci_note', '')})"
    return f"{text} [{fmt(ci[0], signed)}, {fmt(ci[1], signed)}]"


class Runner:
    """normlab-cli, and where the runs go."""

    def __init__(self, cli, out, seeds, steps, jobs):
        self.cli, self.out, self.seeds, self.steps, self.jobs = cli, out, seeds, steps, jobs

    def call(self, *args):
        result = subprocess.run([self.cli, *args], capture_output=True, text=True)
        if result.returncode != 0:
            hint = ("\nmeasure_claims: the runs under --out are reused only with the same --seeds and --steps; "
                    "give another --out" if "--overwrite" in result.stderr else "")
            print(f"measure_claims: normlab-cli {' '.join(args)} failed ({result.returncode}):\n"
                  f"{result.stderr.rstrip()}{hint}", file=sys.stderr)
            sys.exit(result.returncode)
        return result.stdout

    def finished_seeds(self, group):
        """How many of the group's seeds have a finished run already (reused, not trained again)."""
        return sum((self.folder(group) / f"seed-{seed}" / "summary.json").exists() for seed in range(1, self.seeds + 1))

    def folder(self, group):
        return self.out / "groups" / group.name

    def train(self, group):
        """Trains (or reuses) the group's seeds and probes them; returns the group and how many it reused."""
        reused = self.finished_seeds(group)
        command = ["train", "--preset", group.preset, "--seeds", f"1-{self.seeds}", "--set", "threads=1", "--quiet",
                   "--out", str(self.folder(group))]
        for assignment in group.sets:
            command += ["--set", assignment]
        if self.steps:
            command += ["--steps", str(self.steps)]
        if group.finetune:
            command.append("--save-checkpoint")
        self.call(*command)
        for seed in range(1, self.seeds + 1):
            run = self.folder(group) / f"seed-{seed}"
            summary = json.loads((run / "summary.json").read_text())
            if group.finetune and summary["status"] == "completed" and not (run / "freeze_norms.json").exists():
                self.call("probe", "--freeze-norms", "--checkpoint", str(run / "model.safetensors"),
                          "--finetune-steps", str(group.finetune), "--out", str(run))
        return group, reused

    def group_steps(self, group):
        return json.loads((self.folder(group) / "group.json").read_text())["config"]["train"]["steps"]

    def compare(self, metric, *groups):
        args = ["compare", "--metric", metric, "--json"]
        for group in groups:
            args += ["--run", str(self.folder(group))]
        return json.loads(self.call(*args))


@dataclass
class Contrast:
    """B - A on `metric` ("{steps}" is the groups' last step), claimed to be below 0 (expect -1) or above
    (expect +1); an interval inside (-margin, margin) is no effect."""
    what: str
    a: Group
    b: Group
    metric: str
    expect: int
    margin: float = 0.0

    def groups(self):
        return [self.a, self.b]

    def measure(self, runner):
        metric = self.metric.replace("{steps}", str(runner.group_steps(self.a)))
        out = runner.compare(metric, self.a, self.b)
        d = out["difference"]
        ci = d.get("ci")
        if ci and (ci[0] > 0 or ci[1] < 0):
            status = HOLDS if (1 if ci[0] > 0 else -1) == self.expect else OPPOSITE
        elif ci and self.margin and -self.margin < ci[0] and ci[1] < self.margin:
            status = NO_EFFECT
        else:
            status = INCONCLUSIVE
        left_out = [f"{name} {out[key]['diverged']} diverged" for key, name in (("a", "A"), ("b", "B"))
                    if out[key]["diverged"]]
        text = (f"{self.what} ({metric}): {interval(out['a'])} vs {interval(out['b'])}, "
                f"{d['kind']} B - A {interval(d, signed=True)}" + (f" ({', '.join(left_out)})" if left_out else ""))
        return status, text, out


@dataclass
class Diverges:
    """The phenomenon itself: at least one run of `group` diverges (else the claim is not seen)."""
    what: str
    group: Group

    def groups(self):
        return [self.group]

    def measure(self, runner):
        out = runner.compare("final_loss", self.group)
        runs = len(out["a"]["runs"])
        diverged = out["a"]["diverged"]
        return (HOLDS if diverged else NOT_SEEN), f"{self.what}: {diverged} of {runs} runs diverged", out


@dataclass
class Separated:
    """Two numbers a probe wrote into each run of `group`: the `high` metric's interval lies above the
    `low` one's."""
    what: str
    group: Group
    high: str
    low: str

    def groups(self):
        return [self.group]

    def measure(self, runner):
        high, low = runner.compare(self.high, self.group)["a"], runner.compare(self.low, self.group)["a"]
        if high.get("ci") and low.get("ci") and low["ci"][1] < high["ci"][0]:
            status = HOLDS
        elif high.get("ci") and low.get("ci") and high["ci"][1] < low["ci"][0]:
            status = OPPOSITE
        else:
            status = INCONCLUSIVE
        return status, f"{self.what}: {interval(high, True)} vs {interval(low, True)}", {"high": high, "low": low}


@dataclass
class LowerSensitivity:
    """Wortsman et al.'s lr sensitivity (`sweep collect`) of `preset` over `lrs` and `key`'s two values:
    the second's bootstrap interval lies below the first's."""
    what: str
    preset: str
    lrs: str
    key: str
    values: tuple
    steps: int

    def groups(self):
        return []

    def measure(self, runner):
        sweep = runner.out / "sweeps" / f"{self.preset}-{self.key}"
        steps = runner.steps or self.steps
        if not (sweep / "sweep.json").exists():
            runner.call("sweep", "plan", "--preset", self.preset, "--axis", f"train.lr={self.lrs}", "--axis",
                        f"{self.key}={','.join(self.values)}", "--seeds", str(runner.seeds), "--steps", str(steps),
                        "--out", str(sweep))
        runner.call("sweep", "run", str(sweep), "--jobs", str(runner.jobs), "--quiet")
        runner.call("sweep", "collect", str(sweep))
        with open(sweep / "lr_sensitivity.csv", newline="") as handle:
            rows = {row[self.key]: row for row in csv.DictReader(handle)}
        first, second = (rows[value] for value in self.values)

        def bounds(row):
            low, high = row.get("lr_sensitivity_ci95_low"), row.get("lr_sensitivity_ci95_high")
            return (float(low), float(high)) if low and high else None

        a, b = bounds(first), bounds(second)
        status = INCONCLUSIVE
        if a and b and b[1] < a[0]:
            status = HOLDS
        elif a and b and a[1] < b[0]:
            status = OPPOSITE

        def text(row, ci):
            return fmt(float(row["lr_sensitivity"])) + (f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else "")

        return status, (f"{self.what}: {self.key}={self.values[0]} {text(first, a)} vs {self.values[1]} "
                        f"{text(second, b)} ({steps} steps, lr {self.lrs})"), {"rows": rows}


@dataclass
class EdgeRatio:
    """`sweep edge` of `preset` over `key`'s values: the paired edge ratio of the second to the first,
    claimed to lie in `claimed` (low, high)."""
    what: str
    preset: str
    vary: str
    criterion: str
    claimed: tuple
    steps: int
    bounds: str = "train.lr=0.01:3"

    def groups(self):
        return []

    def measure(self, runner):
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{self.preset}-{self.criterion}")
        steps = runner.steps or self.steps
        out = json.loads(runner.call("sweep", "edge", "--preset", self.preset, "--steps", str(steps), "--axis",
                                     self.bounds, "--vary", self.vary, "--criterion", self.criterion, "--seeds",
                                     str(runner.seeds), "--tolerance", "5%", "--jobs", str(runner.jobs), "--json",
                                     "--out", str(runner.out / "edges" / name)))
        ratio = (out.get("ratios") or [{}])[0]
        ci = ratio.get("ci95")
        low, high = self.claimed
        if ci and ci[1] >= low and ci[0] <= high and ci[1] < 1:
            status = HOLDS
        elif ci and (ci[0] > high or ci[1] < low):
            status = OPPOSITE
        else:
            status = INCONCLUSIVE
        edges = ", ".join(f"{v['label']} {fmt((v.get('edge') or {}).get('value'))}" for v in out["variants"])
        ratio_text = f"{fmt(ratio.get('value'))} [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else "n/a"
        return status, f"{self.what} ({self.criterion}): edges {edges}; ratio {ratio_text}", out


@dataclass
class Claim:
    id: str
    claim: str
    source: str
    checks: list = field(default_factory=list)


POSTLN_NO_WARMUP, POSTLN_WARMUP = Group("postln-no-warmup"), Group("postln-warmup")
DEEP_POSTLN, DEEP_PRELN = Group("deep-postln"), Group("deep-preln")
LOGIT_GROWTH, LOGIT_GROWTH_QK = Group("logit-growth"), Group("logit-growth-qknorm")
LOGIT_DRIFT = Group("logit-drift")
# A margin: a paired difference of final held-out loss inside +-0.05 nats is no effect here.
NATS = 0.05

CLAIMS = [
    Claim("warmup", "Post-LN needs lr warmup; Pre-LN does not", "Xiong et al. 2020", [
        Contrast("Post-LN with 150 warmup steps (A) vs without (B)", POSTLN_WARMUP, POSTLN_NO_WARMUP,
                 "final_val_loss", +1, NATS),
        Contrast("Post-LN (A) vs Pre-LN (B), both without warmup", POSTLN_NO_WARMUP, Group("preln-no-warmup"),
                 "final_val_loss", -1, NATS)]),
    Claim("depth", "DeepNorm and ReZero train 48-block stacks Post-LN cannot",
          "Wang et al. 2022; Bachlechner et al. 2021", [
              Contrast("48-block Post-LN (A) vs DeepNorm (B)", DEEP_POSTLN, Group("deep-deepnorm"),
                       "final_val_loss", -1, NATS),
              Contrast("48-block Post-LN (A) vs ReZero (B)", DEEP_POSTLN, Group("deep-rezero"), "final_val_loss",
                       -1, NATS)]),
    Claim("qk-logits", "Without QK-norm attention logits grow and attention collapses at high lr; QK-norm "
          "prevents it", "Wortsman et al. 2023", [
              Contrast("largest attention logit, without (A) vs with QK-norm (B)", LOGIT_GROWTH, LOGIT_GROWTH_QK,
                       "max:attn_max_logit", -1),
              Contrast("lowest attention entropy", LOGIT_GROWTH, LOGIT_GROWTH_QK, "min:attn_entropy", +1),
              Contrast("final held-out loss", LOGIT_GROWTH, LOGIT_GROWTH_QK, "final_val_loss", -1, NATS)]),
    Claim("qk-sensitivity", "QK-norm lowers learning-rate sensitivity", "Wortsman et al. 2023", [
        LowerSensitivity("lr sensitivity", "logit-growth", "3e-4,1e-3,3e-3,1e-2,3e-2,1e-1,3e-1", "model.qk_norm",
                         ("none", "layernorm"), 300)]),
    Claim("z-loss", "Output logits diverge at high lr; z-loss prevents it", "PaLM; Wortsman et al. 2023", [
        Diverges("runs at lr 0.3 without z-loss", LOGIT_DRIFT),
        Contrast("final mean log Z, without (A) vs with z-loss 1e-4 (B)", LOGIT_DRIFT, Group("logit-drift-zloss"),
                 "log_z_mean@{steps}", -1),
        Contrast("final held-out loss", LOGIT_DRIFT, Group("logit-drift-zloss"), "final_val_loss", -1, NATS)]),
    Claim("mix-ln", "Mix-LN (25% Post-LN) beats Pre-LN", "Li et al. 2024", [
        Contrast("48 blocks, Pre-LN (A) vs Mix-LN 25% (B)", DEEP_PRELN, Group("deep-mixln"), "final_val_loss", -1,
                 NATS),
        Contrast("48 blocks, Pre-LN (A) vs Mix-LN 6.25% (B)", DEEP_PRELN,
                 Group("deep-mixln", ("model.mix_post_fraction=0.0625",)), "final_val_loss", -1, NATS)]),
    Claim("b2t-depth", "The B2T connection lets a deep Post-LN stack train", "Takase et al. 2022", [
        Contrast("48-block Post-LN (A) vs Post-LN with B2T (B)", DEEP_POSTLN, Group("deep-b2t"), "final_val_loss",
                 -1, NATS)]),
    Claim("resi-dual-depth", "ResiDual lets a deep Post-LN stack train, to Pre-LN's loss or better",
          "Xie et al. 2023", [
              Contrast("48-block Post-LN (A) vs Post-LN with ResiDual (B)", DEEP_POSTLN, Group("deep-resi-dual"),
                       "final_val_loss", -1, NATS),
              Contrast("48 blocks, Pre-LN (A) vs ResiDual (B)", DEEP_PRELN, Group("deep-resi-dual"),
                       "final_val_loss", -1, NATS)]),
    Claim("denseformer-depth", "DenseFormer's depth-weighted averages lower a deep Pre-LN model's loss",
          "Pagliardini et al. 2024", [
              Contrast("48 blocks, Pre-LN (A) vs DenseFormer (B)", DEEP_PRELN, Group("deep-denseformer"),
                       "final_val_loss", -1, NATS)]),
    Claim("prenorm-dilution", "Pre-LN's hidden state grows with depth; LayerNorm Scaling curbs it and lowers "
          "the loss", "Sun et al. 2025", [
              Contrast("48 blocks, largest E||h||^2/d, Pre-LN (A) vs LayerNorm Scaling (B)", DEEP_PRELN,
                       Group("deep-lns"), "max:resid", -1),
              Contrast("48 blocks, final held-out loss, Pre-LN (A) vs LayerNorm Scaling (B)", DEEP_PRELN,
                       Group("deep-lns"), "final_val_loss", -1, NATS)]),
    Claim("attn-res-dilution", "Attention Residuals curb Pre-LN's hidden-state growth and lower the loss",
          "Kimi Team 2026", [
              Contrast("48 blocks, largest E||h||^2/d, Pre-LN (A) vs Attention Residuals (B)", DEEP_PRELN,
                       Group("deep-attn-res"), "max:resid", -1),
              Contrast("48 blocks, final held-out loss, Pre-LN (A) vs Attention Residuals (B)", DEEP_PRELN,
                       Group("deep-attn-res"), "final_val_loss", -1, NATS)]),
    Claim("postln-better-ending", "Post-LN, once stable, ends better than Pre-LN", "Liu et al. 2020; Wang et "
          "al. 2022", [
              Contrast("6 blocks, lr 3e-3, 150 warmup steps, 1500 steps: Pre-LN (A) vs Post-LN (B)",
                       Group("preln-warmup-long"), Group("postln-warmup-long"), "final_val_loss", -1, NATS),
              Contrast("12 blocks, lr 1e-3, 1200 steps: Pre-LN (A) vs DeepNorm (B)",
                       Group("deep-preln", ("model.layers=12", "train.steps=1200")),
                       Group("deep-deepnorm", ("model.layers=12", "train.steps=1200")), "final_val_loss", -1,
                       NATS),
              Contrast("24 blocks, lr 1e-3, 600 steps: Pre-LN (A) vs DeepNorm (B)", Group("mid-preln"),
                       Group("mid-deepnorm"), "final_val_loss", -1, NATS)]),
    Claim("gain-warmup", "LayerNorm gain warmup cuts early instability by 37%", "no primary source", [
        Contrast("Post-LN without lr warmup (A) vs with gain warmup (B)", POSTLN_NO_WARMUP,
                 Group("postln-gain-warmup"), "final_val_loss", -1, NATS)]),
    Claim("prores", "ProRes residual warmup stabilises training", "Chen et al. 2026", [
        Contrast("Post-LN without lr warmup (A) vs with ProRes (B)", POSTLN_NO_WARMUP,
                 Group("postln-residual-warmup"), "final_val_loss", -1, NATS)]),
    Claim("rmsnorm-lr", "RMSNorm needs a 5-10% lower learning rate than LayerNorm", "folklore", [
        EdgeRatio("quickstart, RMSNorm / LayerNorm edge", "quickstart", "model.norm_type=layernorm,rmsnorm",
                  "diverged", (0.90, 0.95), 300),
        EdgeRatio("quickstart, RMSNorm / LayerNorm edge", "quickstart", "model.norm_type=layernorm,rmsnorm",
                  "loss_above=3.0", (0.90, 0.95), 300)]),
    Claim("batchnorm-sequences", "BatchNorm fails in language models: its batch statistics fluctuate",
          "Shen et al. 2020", [
              Contrast(f"6-block Pre-LN, batch {batch}, final held-out loss: LayerNorm (A) vs BatchNorm (B)",
                       Group(layernorm, sets), Group(batchnorm, sets), "final_val_loss", +1, NATS)
              for batch, layernorm, batchnorm, sets in ((32, "preln-batch32", "batchnorm-batch32", ()),
                                                        (8, "preln-batch2", "batchnorm-batch2", ("train.batch_size=8",)),
                                                        (2, "preln-batch2", "batchnorm-batch2", ()),
                                                        (1, "preln-batch2", "batchnorm-batch2", ("train.batch_size=1",)))] + [
              Separated(f"BatchNorm, batch {batch}, held-out loss at step 50 on the running statistics vs on "
                        "the batches' own", Group(preset), "val_loss@50", "val_loss_batch_stats@50")
              for batch, preset in ((32, "batchnorm-batch32"), (2, "batchnorm-batch2"))]),
    Claim("powernorm", "PowerNorm trains Transformers better than LayerNorm", "Shen et al. 2020", [
        Contrast("6-block Pre-LN, batch 32, final held-out loss: LayerNorm (A) vs PowerNorm (B)",
                 Group("preln-batch32"), Group("batchnorm-batch32", ("model.norm_type=powernorm",)),
                 "final_val_loss", -1, NATS)]),
    Claim("norm-free", "Norms can be removed at inference by freezing them one by one with fine-tuning; all "
          "at once degrades badly", "Heimersheim 2024; Baroni et al. 2025", [
              Separated(f"{preset}: all at once vs one by one with 200 steps each (vs control)",
                        Group(preset, finetune=200), "freeze_norms.json:all_at_once.loss_change",
                        "freeze_norms.json:finetune.loss_change_vs_control")
              for preset in ("quickstart", "preln-no-warmup", "postln-warmup")]),
]


def verdict(statuses, seeds):
    if NOT_SEEN in statuses:
        return f"not seen at n={seeds}"
    if OPPOSITE in statuses or NO_EFFECT in statuses:
        return f"does not hold at laptop scale (n={seeds})"
    if all(status == HOLDS for status in statuses):
        return f"holds at laptop scale (n={seeds})"
    return f"inconclusive at n={seeds}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default="build/app/normlab-cli")
    parser.add_argument("--claim", action="append", choices=[claim.id for claim in CLAIMS],
                        help="measure only these claims (default: all)")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 1..N (default 5)")
    parser.add_argument("--steps", type=int, help="shorten every run to N steps (default: the presets')")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time, one thread each")
    parser.add_argument("--out", type=Path, help="where the runs go (default: a temporary folder)")
    parser.add_argument("--json", type=Path, help="also write every check's numbers to this file")
    args = parser.parse_args()
    if args.seeds < 2:
        parser.error("--seeds must be at least 2: one seed has no interval")
    if args.steps is not None and args.steps < 1:
        parser.error("--steps must be at least 1 (leave it out for the presets' own lengths)")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.json and not args.json.parent.is_dir():
        parser.error(f"--json {args.json}: its folder does not exist")
    if not (Path(args.cli).is_file() and os.access(args.cli, os.X_OK)):
        parser.error(f"normlab-cli not found at {args.cli}: build NormLab first (README.md) or pass --cli PATH")
    claims = [claim for claim in CLAIMS if not args.claim or claim.id in args.claim]
    with tempfile.TemporaryDirectory() as scratch:
        runner = Runner(args.cli, args.out or Path(scratch), args.seeds, args.steps, args.jobs)
        groups = list(dict.fromkeys(group for claim in claims for check in claim.checks for group in check.groups()))
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for group, reused in pool.map(runner.train, groups):
                what = "reused" if reused == args.seeds else f"trained ({reused} reused)" if reused else "trained"
                print(f"{what} {group.label}: seeds 1-{args.seeds}", file=sys.stderr)
        rows, details, document = [], [], []
        for claim in claims:
            results = [check.measure(runner) for check in claim.checks]
            statuses = [status for status, _, _ in results]
            text = verdict(statuses, args.seeds)
            rows.append(f"| {claim.claim} | {claim.source} | {text}: " + "; ".join(t for _, t, _ in results) + " |")
            details.append(f"### {claim.claim}\n" + "\n".join(f"- {status}: {t}" for status, t, _ in results))
            document.append({"id": claim.id, "claim": claim.claim, "verdict": text,
                             "checks": [{"status": s, "text": t, "numbers": n} for s, t, n in results]})
    print("| claim | source | here (mean [95% CI]) |\n|---|---|---|")
    print("\n".join(rows))
    print("\n" + "\n\n".join(details))
    if args.json:
        args.json.write_text(json.dumps({"seeds": args.seeds, "steps": args.steps or None, "claims": document},
                                        indent=1))


if __name__ == "__main__":
    main()
