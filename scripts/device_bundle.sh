#!/usr/bin/env bash
# Copies the dependencies that a GPU machine without a package registry lacks into .device/ (git-ignored;
# carried there with the working tree): Eigen, nlohmann_json, simdjson (header and shared library) and
# Debian's GoogleTest sources. scripts/device_cuda.sh configures NormLab with them (-DNORMLAB_DEPS_DIR=.device).
set -euo pipefail
NORMLAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="$NORMLAB_ROOT/.device"

for path in /usr/include/eigen3/Eigen /usr/include/nlohmann/json.hpp /usr/include/simdjson.h \
    /usr/src/googletest/CMakeLists.txt; do
    if [ ! -e "$path" ]; then
        echo "normlab: $path is missing; install libeigen3-dev, nlohmann-json3-dev, libsimdjson-dev and googletest" >&2
        exit 2
    fi
done
rm -rf "$DEPS/eigen3" "$DEPS/include" "$DEPS/lib" "$DEPS/googletest"
mkdir -p "$DEPS/include" "$DEPS/lib"
cp -r /usr/include/eigen3 "$DEPS/eigen3"
cp -r /usr/include/nlohmann "$DEPS/include/nlohmann"
cp /usr/include/simdjson.h "$DEPS/include/"
# under its soname, which is the name the programs look for at run time
cp -L /usr/lib/x86_64-linux-gnu/libsimdjson.so "$DEPS/lib/$(objdump -p /usr/lib/x86_64-linux-gnu/libsimdjson.so | awk '/SONAME/ {print $2}')"
cp -r /usr/src/googletest "$DEPS/googletest"
echo "normlab: bundled $(du -sh "$DEPS" | cut -f1) into $DEPS (eigen3/, include/, lib/, googletest/)"
