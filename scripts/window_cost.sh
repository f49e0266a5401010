#!/usr/bin/env bash
# What the desktop app's window costs the engine: trains the same preset (same seed, same engine
# threads) alternately with normlab-cli (no window) and with normlab (window drawing live charts,
# offscreen unless a display is set), REPEATS times each, and prints the median steps/s of both, their
# ratio (read from the runs' summary.json) and the GUI thread's CPU time per second of training (read
# from /proc while the window runs). Usage: scripts/window_cost.sh [PRESET] [STEPS] [REPEATS] [KEY=VALUE...]
# (the KEY=VALUE settings go to both, e.g. device=cuda model.d_model=256).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${NORMLAB_BUILD:-$ROOT/build}"
PRESET="${1:-quickstart}"
STEPS="${2:-600}"
REPEATS="${3:-5}"
THREADS="${NORMLAB_WINDOW_COST_THREADS:-0}"  # the app's default: every core
shift $(($# < 3 ? $# : 3))
SETS=(--set train.steps="$STEPS" --set threads="$THREADS")
for setting in "$@"; do SETS+=(--set "$setting"); done
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then export QT_QPA_PLATFORM=offscreen; fi

echo "normlab: $PRESET${*:+ ($*)}, $STEPS steps, threads=$THREADS, $REPEATS runs each; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$REPEATS"); do
    "$BUILD/app/normlab-cli" train --preset "$PRESET" "${SETS[@]}" --out "$WORK/cli-$i" --quiet >/dev/null
    NORMLAB_RUNS_DIR="$WORK/gui-$i" "$BUILD/app/normlab" --preset "$PRESET" "${SETS[@]}" \
        --quit-after-steps "$STEPS" --size 1680x1020 >"$WORK/gui-$i.log" 2>&1 &
    pid=$!
    ticks=0  # user + system clock ticks of the main (GUI) thread, the last value read before it exits
    while kill -0 "$pid" 2>/dev/null; do
        now=$(awk '{print $14 + $15}' "/proc/$pid/task/$pid/stat" 2>/dev/null || true)
        [ -n "$now" ] && ticks=$now
        sleep 0.2
    done
    if ! wait "$pid"; then
        echo "normlab: the window's run $i failed; its output:" >&2
        cat "$WORK/gui-$i.log" >&2
        exit 1
    fi
    echo "$ticks" >"$WORK/gui-$i.ticks"
done
python3 - "$WORK" "$REPEATS" "$(getconf CLK_TCK)" <<'PY'
import glob, json, statistics, sys
work, repeats, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def rate(pattern):
    return [json.load(open(path))["steps_per_s"] for path in sorted(glob.glob(f"{work}/{pattern}"))]
cli, gui = rate("cli-*/summary.json"), rate("gui-*/*/summary.json")
assert len(cli) == repeats and len(gui) == repeats, (cli, gui)
print("without window (normlab-cli): " + " ".join(f"{r:.1f}" for r in cli) + f"  median {statistics.median(cli):.1f} steps/s")
print("with window (normlab):        " + " ".join(f"{r:.1f}" for r in gui) + f"  median {statistics.median(gui):.1f} steps/s")
print(f"window cost: {100 * (1 - statistics.median(gui) / statistics.median(cli)):.1f}% of engine speed")
share = []
for i in range(1, repeats + 1):
    summary = json.load(open(glob.glob(f"{work}/gui-{i}/*/summary.json")[0]))
    seconds = summary["steps"] / summary["steps_per_s"]
    share.append(float(open(f"{work}/gui-{i}.ticks").read()) / hz / seconds)
print("GUI thread CPU per second of training: " + " ".join(f"{100 * s:.1f}%" for s in share)
      + f"  median {100 * statistics.median(share):.1f}% of a core")
PY
echo "normlab: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
