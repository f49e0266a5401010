#!/usr/bin/env bash
# Recordings of lessons for `normlab --replay` (docs/window.md#recorded-lessons): each lesson whose
# title begins with one of TITLES (default: the two 48-block lessons, too slow to train live in class)
# is trained from its presets with normlab-cli into OUT/<lesson>/<preset>/, the folder names the
# window matches against the lesson's presets to pause where the lesson does. Then each lesson folder
# is packed as OUT/<lesson>.tar.gz and its size printed. The lesson table comes from `normlab
# --list-lessons`, so a changed lesson records as it now is.
# NORMLAB_RECORD_SETS="KEY=VALUE ..." adds settings to every run, e.g. "train.checkpoint_every=50
# train.checkpoint_keep=0" to keep the states a lecturer can fork into live training from the replay.
#   scripts/record_lessons.sh [OUT] [TITLE...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLI="${NORMLAB_CLI:-$ROOT/build/app/normlab-cli}"
APP="${NORMLAB_APP:-$ROOT/build/app/normlab}"
OUT="${1:-recordings}"
shift || true
TITLES=("$@")
[ ${#TITLES[@]} -gt 0 ] || TITLES=("Depth" "Mix-LN at depth")
mkdir -p "$OUT"
SETS=()
for setting in ${NORMLAB_RECORD_SETS:-}; do SETS+=(--set "$setting"); done
while IFS=$'\t' read -r title presets _pause; do
    wanted=0
    for prefix in "${TITLES[@]}"; do [[ "$title" == "$prefix"* ]] && wanted=1; done
    [ "$wanted" = 1 ] || continue
    # The window names the archive's lesson by the same rule (recordingTitle in app/gui/window_replay.cpp).
    slug="$(printf '%s' "$title" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//')"
    IFS=',' read -ra names <<<"$presets"
    for preset in "${names[@]}"; do
        folder="$OUT/$slug/$preset"
        if [ -f "$folder/summary.json" ] && ! grep -q '"running"' "$folder/summary.json"; then continue; fi
        echo "record_lessons: $title: $preset" >&2
        "$CLI" train --preset "$preset" "${SETS[@]}" --out "$folder" --overwrite --quiet >/dev/null
    done
    tar -C "$OUT" -czf "$OUT/$slug.tar.gz" "$slug"
    printf '%s\t%s\t%s bytes packed, %s bytes unpacked\n' "$title" "$OUT/$slug.tar.gz" \
        "$(stat -c %s "$OUT/$slug.tar.gz")" "$(du -sb "$OUT/$slug" | cut -f1)"
done < <("$APP" --list-lessons)
