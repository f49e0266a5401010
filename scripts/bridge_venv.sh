#!/usr/bin/env bash
# Creates, or reuses, the virtual environment the PyTorch bridge's tests and benchmark run in: torch,
# transformers, pandas, pyarrow (it reads the Parquet export back) and pytest from PyPI (the bridge
# needs torch>=2.4; Debian has 1.13). It lives outside the clone, in $NORMLAB_BRIDGE_VENV (default
# ~/.cache/normlab/bridge-venv), so later runs and other clones reuse it: the first install downloads
# about 3 GB and takes a few minutes. With --check it only says whether the environment is ready
# (exit 0) or not (exit 1), installing nothing.
set -euo pipefail
VENV="${NORMLAB_BRIDGE_VENV:-$HOME/.cache/normlab/bridge-venv}"
PACKAGES=(torch transformers pandas pyarrow pytest)
IMPORTS="$(IFS=,; echo "${PACKAGES[*]}")"
ready() { [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import $IMPORTS" 2>/dev/null; }
if [ "${1:-}" = "--check" ]; then
    ready && exit 0
    echo "normlab: the bridge's environment $VENV lacks one of: ${PACKAGES[*]}" >&2
    exit 1
fi
if ready; then
    echo "normlab: bridge environment ready at $VENV (torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)'))"
    exit 0
fi
echo "normlab: creating the bridge's test environment at $VENV (${PACKAGES[*]} from PyPI; a few minutes)"
mkdir -p "$(dirname "$VENV")"
/usr/bin/python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip
"$VENV/bin/pip" install --quiet "${PACKAGES[@]}"
echo "normlab: bridge environment ready at $VENV"
