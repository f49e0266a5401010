#!/usr/bin/env bash
# The first lesson's fix as a controlled experiment (docs/window.md#lessons): postln-no-warmup on N seeds
# (default 5) for 600 steps, each forked at step 100 and switched to Pre-LN, then `compare` of the stuck
# runs and their forks (means, 95% CIs, the difference paired by seed). About 2 minutes on 2 cores.
#   scripts/lesson_fork.sh [OUT] [SEEDS]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLI="${NORMLAB_CLI:-$ROOT/build/app/normlab-cli}"
OUT="${1:-lesson-fork}"
SEEDS="${2:-5}"
"$CLI" train --preset postln-no-warmup --steps 600 --set train.checkpoint_every=100 \
    --set train.checkpoint_keep=0 --seeds "$SEEDS" --out "$OUT/stuck" --quiet >/dev/null
mkdir -p "$OUT/rescued"
for ((seed = 1; seed <= SEEDS; seed++)); do
    [ -f "$OUT/rescued/seed-$seed/summary.json" ] && grep -q '"completed"' "$OUT/rescued/seed-$seed/summary.json" &&
        continue
    "$CLI" train --fork "$OUT/stuck/seed-$seed" --at 100 --set model.norm_placement=pre \
        --out "$OUT/rescued/seed-$seed" --overwrite --quiet >/dev/null
done
for metric in final_val_loss final_loss; do
    "$CLI" compare --run "$OUT/stuck" --run "$OUT/rescued" --metric "$metric"
done
