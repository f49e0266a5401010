#!/usr/bin/env bash
# One command to run NormLab on a fresh Debian 12 machine: installs what is missing, builds Release into
# build/, then opens the desktop app (extra arguments go to `normlab`, e.g. --lesson "Post-LN").
# Without a display it says so and trains the quickstart preset with the CLI instead.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup_common.sh"

normlab_install_packages "${NORMLAB_BUILD_PACKAGES[@]}"
normlab_build

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] || [ "${QT_QPA_PLATFORM:-}" = "offscreen" ]; then
    if [ -x "$NORMLAB_BUILD/app/normlab" ]; then
        echo "normlab: opening the window (run folders go to ${NORMLAB_RUNS_DIR:-$HOME/normlab-runs})"
        exec "$NORMLAB_BUILD/app/normlab" "$@"
    fi
    echo "normlab: the desktop app was not built (Qt 6 missing?); using the CLI"
else
    echo "normlab: no display (DISPLAY / WAYLAND_DISPLAY unset), so not opening the window; training"
    echo "normlab: the quickstart preset with the CLI instead (under X: scripts/run.sh; headless screenshot:"
    echo "normlab: QT_QPA_PLATFORM=offscreen scripts/run.sh --preset quickstart --autostart --quit-after-steps 200 --screenshot shot.png)"
fi
run_dir="${NORMLAB_RUNS_DIR:-$NORMLAB_ROOT/runs}/$(date +%Y%m%d-%H%M%S)"  # where the window would put runs too
"$NORMLAB_BUILD/app/normlab-cli" train --preset quickstart --out "$run_dir"
echo "normlab: run folder: $run_dir"
