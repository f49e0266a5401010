#!/usr/bin/env bash
# The CPU speed comparison with PyTorch (docs/performance.md) in one command: builds NormLab (Release,
# build-bench/), sets up the newest PyTorch from PyPI in .venv-peer/ (git-ignored; the test suite does not
# need it), and prints one table: NormLab vs PyTorch eager / torch.compile / Debian's python3-torch +
# OpenBLAS, GEMM share, telemetry cost and peak RSS per shape. Extra arguments go to
# tests/peer/run_comparison.py (e.g. --shapes tiny).
set -euo pipefail
# An engine-only Release tree of its own, so the comparison never reconfigures build/.
NORMLAB_BUILD="${NORMLAB_BUILD:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build-bench}"
source "$(dirname "${BASH_SOURCE[0]}")/setup_common.sh"

normlab_install_packages "${NORMLAB_BUILD_PACKAGES[@]}" python3 python3-venv python3-torch python3-numpy \
    libopenblas0-pthread
normlab_build -DNORMLAB_GUI=OFF

# NORMLAB_PEER_VENV reuses a virtual environment that already has torch (e.g. another checkout's).
VENV="${NORMLAB_PEER_VENV:-$NORMLAB_ROOT/.venv-peer}"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
    echo "normlab: installing the newest PyTorch from PyPI into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --upgrade pip torch numpy
fi

echo "normlab: load before timing: $(cut -d' ' -f1-3 /proc/loadavg) (2 cores; re-run when it is high)"
/usr/bin/python3 "$NORMLAB_ROOT/tests/peer/run_comparison.py" --cli "$NORMLAB_BUILD/app/normlab-cli" \
    --venv-python "$VENV/bin/python" "$@"
echo "normlab: load after timing: $(cut -d' ' -f1-3 /proc/loadavg)"
