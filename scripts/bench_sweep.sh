#!/usr/bin/env bash
# Benchmark: a shipped sweep run on this machine two ways, side by side: N single-thread jobs at once
# (sweep run's default) against the same points one after another with every core, and the time the
# divergence rule (train.diverge_loss) saves on a grid of high learning rates. Prints a table; usage:
#   scripts/bench_sweep.sh [BUILD_DIR] [SWEEP]     (defaults: build, warmup-map)
set -euo pipefail
BUILD="${1:-build}"
SWEEP="${2:-warmup-map}"
CLI="$BUILD/app/normlab-cli"
WORK="$(mktemp -d /tmp/normlab-bench-sweep.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
CORES="$(nproc)"

# time_sweep NAME PLAN_ARGS... -- RUN_ARGS...: plans into a fresh folder, runs, prints one table row.
time_sweep() {
    local name="$1"
    shift
    local plan=() run=()
    while [ "$1" != "--" ]; do plan+=("$1"); shift; done
    shift
    run=("$@")
    local folder="$WORK/$(echo "$name" | tr -c 'A-Za-z0-9\n' '_')"
    "$CLI" sweep plan "${plan[@]}" --out "$folder" >/dev/null
    local start end points
    start="$(date +%s.%N)"
    "$CLI" sweep run "$folder" "${run[@]}" --quiet
    end="$(date +%s.%N)"
    points="$(python3 -c "import json; print(len(json.load(open('$folder/sweep.json'))['points']))")"
    local diverged
    diverged="$("$CLI" sweep status "$folder" | tail -1 | sed -E 's/.* ([0-9]+) diverged.*/\1/')"
    python3 -c "s=$end-$start; print('| $name | $points | $diverged | %.1f | %.1f |' % (s, $points * 60 / s))"
}

echo "machine: $CORES cores, load average $(cut -d' ' -f1 /proc/loadavg) before the runs; $(date -u +%F), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "| run | points | diverged | wall s | points/min |"
echo "|---|---:|---:|---:|---:|"
time_sweep "$SWEEP, --jobs $CORES --threads-per-job 1" "$SWEEP" -- --jobs "$CORES" --threads-per-job 1
time_sweep "$SWEEP, --jobs 1 --threads-per-job $CORES" "$SWEEP" -- --jobs 1 --threads-per-job "$CORES"
HIGH_LR=(--preset postln-no-warmup --axis train.lr=0.03,0.1,0.3,1 --axis model.norm_placement=post,pre --steps 600)
time_sweep "high lr, divergence rule on" "${HIGH_LR[@]}" -- --jobs "$CORES" --threads-per-job 1
time_sweep "high lr, divergence rule off" "${HIGH_LR[@]}" --set train.diverge_loss=0 -- --jobs "$CORES" --threads-per-job 1
