#!/usr/bin/env python3
"""Does the best learning rate drift with width under SP and stay put under muP? Plans and runs the shipped
`width-map` sweep (lr x d_model {32..256} x {SP, muP}, base width 32; seeds and steps from the file unless
given) into a sweep folder, collects it, and prints per parametrization, width and seed the learning rate
with the lowest final validation loss, then per parametrization the drift log2(best lr at the widest /
best lr at the narrowest) over seeds: mean, 95% t interval and the per-seed values, and the same paired
by seed for SP minus muP. A seed whose best lr sits at an end of the grid is flagged: its drift is a bound.

  python3 scripts/measure_width_map.py --cli build/app/normlab-cli --sweep runs/width-map [--seeds 3]

Re-running continues an unfinished sweep (finished points are skipped).
"""
import argparse
import csv
import math
import statistics
import subprocess
import sys
from pathlib import Path

# Two-sided 95% quantiles of Student's t by degrees of freedom (1..10); the normal quantile beyond.
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]


def interval(values):
    """Mean and 95% t interval of the values (None for the interval with fewer than two)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None
    t = T95[len(values) - 2] if len(values) - 1 <= len(T95) else 1.96
    half = t * statistics.stdev(values) / math.sqrt(len(values))
    return mean, (mean - half, mean + half)


def show(label, values):
    mean, bounds = interval(values)
    per_seed = ", ".join(f"{v:+.2f}" for v in values)
    where = f"[{bounds[0]:+.2f}, {bounds[1]:+.2f}]" if bounds else "(one seed)"
    print(f"{label}: {mean:+.2f} {where} doublings (n={len(values)}; per seed {per_seed})")


def best_lrs(rows):
    """{(parametrization label, width, seed): (best lr, at an end of the grid)} from points.csv's rows (the
    linked width axis's column is "model.d_model+model.d_ff", holding d_model)."""
    groups = {}
    width_column = next(name for name in rows[0] if name.startswith("model.d_model"))
    for row in rows:
        key = (row["model.parametrization"], int(row[width_column]), int(row["seed"]))
        loss = row["final_val_loss"] or row["final_loss"]
        value = float(loss) if row["status"] == "done" and loss else math.inf
        groups.setdefault(key, []).append((value, float(row["train.lr"])))
    grid = sorted({float(row["train.lr"]) for row in rows})
    return {key: (min(points)[1], min(points)[1] in (grid[0], grid[-1])) for key, points in groups.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default="build/app/normlab-cli")
    parser.add_argument("--sweep", required=True, help="the sweep folder (planned here when absent)")
    parser.add_argument("--seeds", type=int, help="seeds 1..N instead of the file's")
    parser.add_argument("--steps", type=int, help="steps per point instead of the file's")
    args = parser.parse_args()
    folder = Path(args.sweep)
    if not (folder / "sweep.json").exists():
        plan = [args.cli, "sweep", "plan", "width-map", "--out", str(folder)]
        plan += ["--seeds", str(args.seeds)] if args.seeds else []
        plan += ["--steps", str(args.steps)] if args.steps else []
        subprocess.run(plan, check=True)
    subprocess.run([args.cli, "sweep", "run", str(folder), "--quiet"], check=True)
    subprocess.run([args.cli, "sweep", "collect", str(folder)], check=True, stdout=subprocess.DEVNULL)
    with open(folder / "points.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    best = best_lrs(rows)
    widths = sorted({width for _, width, _ in best})
    seeds = sorted({seed for _, _, seed in best})
    drifts = {}
    for parametrization in ("SP", "muP"):
        print(f"{parametrization}: best lr per width (seeds {seeds[0]}..{seeds[-1]}; * at an end of the grid)")
        for width in widths:
            cells = [best[(parametrization, width, seed)] for seed in seeds]
            print(f"  d {width:4d}: " + "  ".join(f"{lr:g}{'*' if edge else ''}" for lr, edge in cells))
        drifts[parametrization] = [math.log2(best[(parametrization, widths[-1], s)][0] /
                                             best[(parametrization, widths[0], s)][0]) for s in seeds]
    print()
    for parametrization, values in drifts.items():
        show(f"{parametrization} drift of the best lr from d {widths[0]} to d {widths[-1]}", values)
    show("SP minus muP, paired by seed", [a - b for a, b in zip(drifts["SP"], drifts["muP"])])
    return 0


if __name__ == "__main__":
    sys.exit(main())
