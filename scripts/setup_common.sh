#!/usr/bin/env bash
# Shared by run.sh, test.sh, fuzz.sh and package.sh: installs the Debian packages NormLab needs (only those
# missing) and configures + builds a Release tree in build/. Sourced, not run.
set -euo pipefail

NORMLAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NORMLAB_BUILD="${NORMLAB_BUILD:-$NORMLAB_ROOT/build}"
NORMLAB_JOBS="${NORMLAB_JOBS:-$(nproc)}"

# Installs the given Debian packages when any of them is missing.
normlab_install_packages() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        return 0
    fi
    echo "normlab: installing ${missing[*]}"
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Every Debian package the full build and its tests need (the configure stops, naming the package, when one
# is missing): the compiler and CMake, the header libraries, simdjson, SentencePiece (the tokenizers), LIBXSMM
# (the CPU GEMM kernels), Qt 6 with Charts (which needs OpenGL's development files) and Svg, a font for
# offscreen drawing, git (the commit in --version), and the validators the install test runs on the
# desktop entry and the AppStream metadata.
NORMLAB_BUILD_PACKAGES=(build-essential cmake g++ git libgtest-dev libgmock-dev libeigen3-dev
                        nlohmann-json3-dev libsimdjson-dev libsentencepiece-dev libxsmm-dev qt6-base-dev
                        qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl1-mesa-dev libxkbcommon-dev
                        fonts-dejavu-core desktop-file-utils appstream)

# What scripts/package.sh adds for `cpack -G DEB`, whose dependency scan (CPACK_DEBIAN_PACKAGE_SHLIBDEPS)
# runs file and dpkg-shlibdeps (dpkg-dev) on the binaries, and readelf and strip (binutils) as it packs.
NORMLAB_PACKAGE_PACKAGES=(file dpkg-dev binutils)

# What scripts/fuzz.sh adds: clang, libFuzzer's runtime (libclang_rt.fuzzer, only a recommendation of
# clang, so named here) and LLVM's OpenMP for the engine built with clang.
NORMLAB_FUZZ_PACKAGES=(clang-14 libclang-rt-14-dev libomp-14-dev)

# NORMLAB_WERROR=1 (scripts/test.sh sets it) builds with -DNORMLAB_WERROR=ON: a warning in NormLab's own
# code fails the build, with GCC (the Release and sanitizer builds) and clang (the fuzz build) alike.
normlab_build() {
    local werror=()
    [ "${NORMLAB_WERROR:-0}" = 1 ] && werror=(-DNORMLAB_WERROR=ON)
    cmake -S "$NORMLAB_ROOT" -B "$NORMLAB_BUILD" -DCMAKE_BUILD_TYPE=Release "${werror[@]}" "$@" \
        >"$NORMLAB_BUILD.configure.log" 2>&1 ||
        { cat "$NORMLAB_BUILD.configure.log"; return 1; }
    cmake --build "$NORMLAB_BUILD" -j "$NORMLAB_JOBS"
}
