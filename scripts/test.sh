#!/usr/bin/env bash
# One command to test NormLab: installs what is missing (plus python3-torch for the PyTorch parity
# test), builds Release into build/ and runs every test with ctest; then rebuilds the engine and its
# tests with AddressSanitizer + UndefinedBehaviorSanitizer (without CUDA) into build-asan/ and runs those.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup_common.sh"

normlab_install_packages "${NORMLAB_BUILD_PACKAGES[@]}" python3 python3-torch python3-numpy libopenblas0-pthread
normlab_build

# Tests run one at a time: each already uses every core, so side by side they would only slow each
# other down (and the timing-free tests gain nothing from it).
echo "normlab: running the test suite (Release)"
(cd "$NORMLAB_BUILD" && ctest --output-on-failure)

# The sanitizer build leaves the CUDA backend out (ASan and the CUDA runtime do not mix). Under the
# sanitizers the preset-contrast tests (hundreds of training steps over the same ops the
# other tests cover) would take 20 minutes; the Release run above covers them.
echo "normlab: running the engine tests under AddressSanitizer + UndefinedBehaviorSanitizer"
NORMLAB_BUILD="$NORMLAB_ROOT/build-asan"
normlab_build -DNORMLAB_SANITIZE=ON -DNORMLAB_ENGINE_ONLY=ON -DNORMLAB_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
(cd "$NORMLAB_BUILD" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -L engine -E '^PresetContrasts\.')
