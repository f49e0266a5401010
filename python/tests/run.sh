#!/usr/bin/env bash
# Runs the PyTorch bridge's tests (ctest's "bridge" test) in the environment scripts/bridge_venv.sh
# makes. Never skipped: without that environment this fails and says how to create it.
# Usage: run.sh [--cli PATH-TO-normlab-cli] [pytest arguments...]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${NORMLAB_BRIDGE_VENV:-$HOME/.cache/normlab/bridge-venv}"
if [ "${1:-}" = "--cli" ]; then
    export NORMLAB_CLI="$2"
    shift 2
fi
SETUP="$(cd "$HERE/../.." && pwd)/scripts/bridge_venv.sh"
if ! bash "$SETUP" --check; then
    echo "normlab: FAILED: the bridge's tests need that environment; create it with: bash $SETUP" >&2
    exit 1
fi
cd "$HERE/.."
export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 PYTHONDONTWRITEBYTECODE=1
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider tests "$@"
