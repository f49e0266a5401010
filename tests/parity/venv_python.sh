#!/usr/bin/env bash
# Runs a Python test (tests/parity/hf_parity.py, precision_parity.py) in the environment
# scripts/bridge_venv.sh makes, which has PyPI's torch and transformers; like the bridge's tests it
# fails, never skips, when that environment is missing.
# Usage: venv_python.sh SCRIPT.py ARGS...
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${NORMLAB_BRIDGE_VENV:-$HOME/.cache/normlab/bridge-venv}"
SETUP="$(cd "$HERE/../.." && pwd)/scripts/bridge_venv.sh"
if ! bash "$SETUP" --check; then
    echo "normlab: FAILED: $(basename "$1") needs that environment; create it with: bash $SETUP" >&2
    exit 1
fi
export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 PYTHONDONTWRITEBYTECODE=1 TRANSFORMERS_VERBOSITY=error \
    HF_HUB_DISABLE_PROGRESS_BARS=1 TQDM_DISABLE=1
exec "$VENV/bin/python" "$@"
