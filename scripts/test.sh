#!/usr/bin/env bash
# One command to test NormLab: installs what is missing (plus python3-torch for the PyTorch parity
# test, poppler-utils, whose pdftotext reads exported PDFs back, and clang-format, which every C++
# file must pass unchanged: scripts/check_format.sh runs first, then check_layers.sh), makes the PyTorch bridge's PyPI
# environment outside the clone (scripts/bridge_venv.sh), builds Release into build/ and
# runs every test with ctest (failing when the desktop app or its ui tests are missing); then
# rebuilds the engine and its tests with AddressSanitizer + UndefinedBehaviorSanitizer (without CUDA)
# into build-asan/ and runs those; last, a short fuzzing pass over every reader of outside input
# (scripts/fuzz.sh, NORMLAB_FUZZ_SECONDS per target, default 30).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup_common.sh"

normlab_install_packages "${NORMLAB_BUILD_PACKAGES[@]}" "${NORMLAB_FUZZ_PACKAGES[@]}" python3 python3-torch \
    python3-numpy libopenblas0-pthread poppler-utils clang-format python3-venv ca-certificates
bash "$NORMLAB_ROOT/scripts/check_format.sh"
bash "$NORMLAB_ROOT/scripts/check_layers.sh"
bash "$NORMLAB_ROOT/scripts/check_commits.sh"
bash "$NORMLAB_ROOT/scripts/bridge_venv.sh"
export NORMLAB_WERROR=1  # every build below, the fuzz build's too, fails on a warning in NormLab's code
normlab_build

# Tests run one at a time: each already uses every core, so side by side they would only slow each
# other down (and the timing-free tests gain nothing from it).
# The run must not pass with a part of the product missing: the desktop app must be built and its ui
# tests (and the install test) must be among those that run.
if [ ! -x "$NORMLAB_BUILD/app/normlab" ]; then
    echo "normlab: FAILED: the desktop app $NORMLAB_BUILD/app/normlab was not built" >&2
    exit 1
fi
count_tests() { (cd "$NORMLAB_BUILD" && ctest -N -L "$1" | sed -n 's/^Total Tests: //p'); }
UI_TESTS="$(count_tests ui)"
INSTALL_TESTS="$(count_tests install)"
BRIDGE_TESTS="$(count_tests bridge)"
if [ "${UI_TESTS:-0}" -lt 1 ] || [ "${INSTALL_TESTS:-0}" -lt 1 ] || [ "${BRIDGE_TESTS:-0}" -lt 1 ]; then
    echo "normlab: FAILED: ${UI_TESTS:-0} ui, ${INSTALL_TESTS:-0} install and ${BRIDGE_TESTS:-0} bridge tests configured; expected all three" >&2
    exit 1
fi
echo "normlab: running the test suite (Release; desktop app built, $UI_TESTS ui tests among them)"
export NORMLAB_REQUIRE_TORCH=1  # python3-torch is installed above: the parity test must run, never skip
(cd "$NORMLAB_BUILD" && ctest --output-on-failure)
echo "normlab: the desktop app was built and its $UI_TESTS ui tests ran"

# The sanitizer build leaves the CUDA backend out (ASan and the CUDA runtime do not mix). Under the
# sanitizers the preset-contrast tests (hundreds of training steps over the same ops the
# other tests cover) would take 20 minutes; the Release run above covers them.
echo "normlab: running the engine tests under AddressSanitizer + UndefinedBehaviorSanitizer"
NORMLAB_BUILD="$NORMLAB_ROOT/build-asan"
normlab_build -DNORMLAB_SANITIZE=ON -DNORMLAB_GUI=OFF -DNORMLAB_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
(cd "$NORMLAB_BUILD" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -L engine -E '^PresetContrasts\.')

# The fuzz targets' seeds and regressions already ran above (ctest fuzz_replay); this is a short pass of
# new inputs per target (docs/testing.md#fuzzing; scripts/fuzz.sh 600 for a real campaign).
echo "normlab: fuzzing every reader of outside input for ${NORMLAB_FUZZ_SECONDS:-30} s per target"
bash "$NORMLAB_ROOT/scripts/fuzz.sh" "${NORMLAB_FUZZ_SECONDS:-30}"
