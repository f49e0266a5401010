#!/usr/bin/env bash
# Copies the dependencies that a GPU machine without a package registry lacks into .device/ (git-ignored;
# carried there with the working tree): Eigen, nlohmann_json, simdjson and SentencePiece (headers and
# shared libraries), LIBXSMM (headers and static libraries) and Debian's GoogleTest sources. scripts/device_cuda.sh configures NormLab with them (-DNORMLAB_DEPS_DIR=.device).
# When this machine has built the CUDA backend (nvcc of the GPU machine's CUDA major version), the built
# normlab-cli and normlab_cuda_tests go into .device/bin with libgomp, and are used there if they load;
# the window (normlab), its Qt libraries, the offscreen platform plugin and a font go into .device/gui.tgz
# for device_cuda.sh's window step. Carry .device/bin, .device/lib and .device/gui.tgz (about 45 MB).
set -euo pipefail
NORMLAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="$NORMLAB_ROOT/.device"

for path in /usr/include/eigen3/Eigen /usr/include/nlohmann/json.hpp /usr/include/simdjson.h \
    /usr/include/sentencepiece_processor.h /usr/include/libxsmm.h /usr/lib/libxsmm.a \
    /usr/src/googletest/CMakeLists.txt; do
    if [ ! -e "$path" ]; then
        echo "normlab: $path is missing; install libeigen3-dev, nlohmann-json3-dev, libsimdjson-dev," \
            "libsentencepiece-dev, libxsmm-dev and googletest" >&2
        exit 2
    fi
done
rm -rf "$DEPS/eigen3" "$DEPS/include" "$DEPS/lib" "$DEPS/googletest" "$DEPS/bin" "$DEPS/gui.tgz"
mkdir -p "$DEPS/include" "$DEPS/lib"
cp -r /usr/include/eigen3 "$DEPS/eigen3"
cp -r /usr/include/nlohmann "$DEPS/include/nlohmann"
cp /usr/include/simdjson.h "$DEPS/include/"
# under its soname, which is the name the programs look for at run time
for library in simdjson sentencepiece sentencepiece_train; do
    file=/usr/lib/x86_64-linux-gnu/lib$library.so
    cp -L "$file" "$DEPS/lib/$(objdump -p "$file" | awk '/SONAME/ {print $2}')"
    ln -sf "$(objdump -p "$file" | awk '/SONAME/ {print $2}')" "$DEPS/lib/lib$library.so"  # what the linker finds
done
cp /usr/include/sentencepiece_processor.h /usr/include/sentencepiece_trainer.h "$DEPS/include/"
cp -r /usr/include/libxsmm* "$DEPS/include/"  # libxsmm.h, the libxsmm_*.h it includes, libxsmm/
cp /usr/lib/libxsmm.a /usr/lib/libxsmmnoblas.a "$DEPS/lib/"
cp -r /usr/src/googletest "$DEPS/googletest"
BUILD="${NORMLAB_BUILD:-$NORMLAB_ROOT/build}"
if ldd "$BUILD/app/normlab-cli" 2>/dev/null | grep -q libcudart && [ -x "$BUILD/tests/normlab_cuda_tests" ]; then
    mkdir -p "$DEPS/bin"
    cp "$BUILD/app/normlab-cli" "$BUILD/tests/normlab_cuda_tests" "$DEPS/bin/"
    cp -L "$(ldd "$BUILD/app/normlab-cli" | awk '/libgomp/ {print $3}')" "$DEPS/lib/"
    echo "normlab: carried the CUDA build of $BUILD ($(nvcc --version | tail -1))"
fi
# The libraries a program needs beyond the C and C++ runtimes and the CUDA ones the GPU machine has
shipped_libraries() {
    ldd "$@" | awk '$3 ~ /^\// {print $3}' | sort -u |
        grep -v -E '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libcudart|libcublas|libcublasLt)\.so'
}
PLUGIN=/usr/lib/x86_64-linux-gnu/qt6/plugins/platforms/libqoffscreen.so
if ldd "$BUILD/app/normlab" 2>/dev/null | grep -q libcudart && [ -e "$PLUGIN" ]; then
    STAGE="$(mktemp -d)"
    trap 'rm -rf "$STAGE"' EXIT
    mkdir -p "$STAGE/app" "$STAGE/lib" "$STAGE/plugins/platforms" "$STAGE/fonts"
    cp "$BUILD/app/normlab" "$BUILD/app/normlab-cli" "$STAGE/app/"
    cp "$PLUGIN" "$STAGE/plugins/platforms/"
    for library in $(shipped_libraries "$BUILD/app/normlab" "$PLUGIN"); do cp -L "$library" "$STAGE/lib/"; done
    cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf "$STAGE/fonts/" 2>/dev/null || true
    tar -czf "$DEPS/gui.tgz" -C "$STAGE" .
    echo "normlab: packed the window and $(ls "$STAGE/lib" | wc -l) libraries into $DEPS/gui.tgz"
fi
echo "normlab: bundled $(du -sh "$DEPS" | cut -f1) into $DEPS (eigen3/, include/, lib/, googletest/)"
