#!/usr/bin/env bash
# One command to run NormLab on a fresh Debian 12 machine: installs what is missing, builds Release into
# build/, then trains the quickstart preset with the CLI and prints where its run folder is.
# Extra arguments go to `normlab-cli train` (e.g. --preset postln-no-warmup).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup_common.sh"

normlab_install_packages "${NORMLAB_BUILD_PACKAGES[@]}"
normlab_build

run_dir="$NORMLAB_ROOT/runs/$(date +%Y%m%d-%H%M%S)"
args=("$@")
if [ ${#args[@]} -eq 0 ]; then args=(--preset quickstart); fi
echo "normlab: the desktop app is not built yet; training with the CLI instead"
"$NORMLAB_BUILD/app/normlab-cli" train "${args[@]}" --out "$run_dir"
echo "normlab: run folder: $run_dir"
