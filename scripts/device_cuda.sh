#!/usr/bin/env bash
# The CUDA checks for a GPU machine with nvcc, cmake and python3 + torch but no package registry: builds
# the engine, the CLI and the CUDA tests (Release, engine only) with the header-only dependencies carried
# in .device/ (scripts/device_bundle.sh makes it), runs the CUDA tests, then times NormLab on CUDA against
# PyTorch on the same GPU (tests/peer/run_comparison.py --device cuda). Results go to $OUT if set, else
# build-device/results/. Extra arguments go to run_comparison.py (e.g. --shapes tiny,small).
set -uo pipefail
NORMLAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="$NORMLAB_ROOT/.device"
BUILD="${NORMLAB_BUILD:-$NORMLAB_ROOT/build-device}"
RESULTS="${OUT:-$BUILD/results}"
mkdir -p "$RESULTS"

if [ ! -e "$DEPS/eigen3/Eigen/Core" ]; then
    echo "normlab: no dependency bundle in $DEPS; run scripts/device_bundle.sh where the packages are" >&2
    exit 2
fi
# Kernels for this GPU only (faster to build); CMAKE_CUDA_ARCHITECTURES overrides.
ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
    head -1 | tr -d '. ')}"
ARCHITECTURES="${ARCHITECTURES:-80;90}"
{
    nvidia-smi 2>&1 || true
    nvcc --version 2>&1 | tail -2
    python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1 || true
} >"$RESULTS/machine.txt"

echo "normlab: configuring $BUILD (CUDA architectures $ARCHITECTURES)"
cmake -S "$NORMLAB_ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DNORMLAB_GUI=OFF -DNORMLAB_CUDA=ON \
    -DNORMLAB_DEPS_DIR="$DEPS" -DCMAKE_CUDA_ARCHITECTURES="$ARCHITECTURES" >"$RESULTS/configure.log" 2>&1 ||
    { tail -30 "$RESULTS/configure.log"; exit 1; }
START=$(date +%s)
cmake --build "$BUILD" -j "$(nproc)" --target normlab-cli normlab_cuda_tests >"$RESULTS/build.log" 2>&1 ||
    { tail -40 "$RESULTS/build.log"; exit 1; }
echo "normlab: built in $(($(date +%s) - START)) s"

echo "normlab: CUDA tests"
"$BUILD/tests/normlab_cuda_tests" --gtest_output="json:$RESULTS/cuda_tests.json" >"$RESULTS/cuda_tests.log" 2>&1
TESTS=$?
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|FAILED TEST" "$RESULTS/cuda_tests.log" | tail -40

echo "normlab: device selection"
"$BUILD/app/normlab-cli" train --preset quickstart --set device=auto --steps 20 --out "$RESULTS/quickstart-auto" \
    --overwrite 2>&1 | tail -3 | tee "$RESULTS/quickstart.log"

echo "normlab: NormLab on CUDA vs PyTorch on the same GPU"
python3 "$NORMLAB_ROOT/tests/peer/run_comparison.py" --cli "$BUILD/app/normlab-cli" --device cuda \
    --system-python python3 --json "$RESULTS/comparison.json" "$@" 2>"$RESULTS/comparison.err" |
    tee "$RESULTS/comparison.md"
tail -5 "$RESULTS/comparison.err"
exit $TESTS
