#!/usr/bin/env bash
# Builds NormLab's Debian package: a portable Release build (no -march=native, so the package runs on any
# x86-64 machine; CPU backend only unless NORMLAB_PACKAGE_CUDA=ON) in build-package/, then
# `cpack -G DEB`, installing first the Debian packages both need (setup_common.sh's lists). Prints the
# .deb's path and its dependencies. Install it with: apt install ./normlab_*.deb
set -euo pipefail
NORMLAB_BUILD="${NORMLAB_BUILD:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build-package}"
source "$(dirname "${BASH_SOURCE[0]}")/setup_common.sh"

normlab_install_packages "${NORMLAB_BUILD_PACKAGES[@]}" "${NORMLAB_PACKAGE_PACKAGES[@]}"
# The package holds what `cmake --install` lays out; installing needs only those targets, not the tests.
cmake -S "$NORMLAB_ROOT" -B "$NORMLAB_BUILD" -DCMAKE_BUILD_TYPE=Release -DNORMLAB_NATIVE=OFF \
    -DNORMLAB_CUDA="${NORMLAB_PACKAGE_CUDA:-OFF}" -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON \
    >"$NORMLAB_BUILD.configure.log" 2>&1 || { cat "$NORMLAB_BUILD.configure.log"; exit 1; }
cmake --build "$NORMLAB_BUILD" -j "$NORMLAB_JOBS" --target normlab normlab-cli normlab_icons
(cd "$NORMLAB_BUILD" && cpack -G DEB >cpack.log 2>&1) || { cat "$NORMLAB_BUILD/cpack.log"; exit 1; }
DEB="$(ls -t "$NORMLAB_BUILD"/normlab_*.deb | head -1)"
echo "normlab: package $DEB ($(du -h "$DEB" | cut -f1))"
dpkg-deb --field "$DEB" Package Version Architecture Depends
