#!/usr/bin/env bash
# Fuzzes every reader of outside input (docs/testing.md#fuzzing): installs what is missing (clang 14
# and libFuzzer's runtime among it), builds the libFuzzer targets of tests/fuzz into build-fuzz/
# (-DNORMLAB_FUZZ=ON: clang, ASan + UBSan, the engine and the targets only), runs each target for
# SECONDS (default 600) on a scratch copy of its seed corpus (build-fuzz/corpus/<target>, kept between
# runs) with its dictionary, NORMLAB_FUZZ_JOBS targets at a time (default: one per core), and prints
# per target the executions, the coverage (cov/ft of libFuzzer's final stats) and the findings, which
# are saved under build-fuzz/findings/<target>/. Exits 1 when any target found something.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup_common.sh"

FUZZ_SECONDS="${1:-600}"
FUZZ_JOBS="${NORMLAB_FUZZ_JOBS:-$(nproc)}"
if ! [[ "$FUZZ_SECONDS" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: scripts/fuzz.sh [SECONDS]   (seconds per target, default 600)" >&2
    exit 2
fi

normlab_install_packages "${NORMLAB_BUILD_PACKAGES[@]}" "${NORMLAB_FUZZ_PACKAGES[@]}"
# -O1 -g without NDEBUG: the library's assertions (nlohmann's among them) stay on while fuzzing.
NORMLAB_BUILD="$NORMLAB_ROOT/build-fuzz"
build_start=$(date +%s)
normlab_build -DNORMLAB_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++-14 -DNORMLAB_GUI=OFF -DNORMLAB_CUDA=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g"
echo "normlab: fuzz build took $(($(date +%s) - build_start)) s"

FUZZ="$NORMLAB_BUILD/tests/fuzz"
SOURCE="$NORMLAB_ROOT/tests/fuzz"
mapfile -t targets <"$NORMLAB_BUILD/fuzz_targets.txt"

# The JSON readers take inputs up to 1 MB (libFuzzer's default of 4096 bytes hid a stack overflow at
# 50,000 levels of nesting); the others keep libFuzzer's choice.
JSON_TARGETS=" config safetensors metrics_line run_folder sweep_file sweep_folder experiment "
max_len_of() {
    if [[ "$JSON_TARGETS" == *" $1 "* ]]; then echo 1048576; else echo 0; fi
}

# Runs one target for FUZZ_SECONDS; its log, wall time and findings go under build-fuzz/.
fuzz_target() {
    local target="$1"
    local corpus="$NORMLAB_BUILD/corpus/$target" findings="$NORMLAB_BUILD/findings/$target"
    local scratch="$NORMLAB_BUILD/tmp/$target" log="$NORMLAB_BUILD/logs/$target.log"
    rm -rf "$findings" "$scratch"
    mkdir -p "$corpus" "$findings" "$scratch" "$(dirname "$log")"
    local seed
    for seed in "$SOURCE/corpus/$target"/*; do
        [ -e "$corpus/$(basename "$seed")" ] || cp "$seed" "$corpus/"
    done
    local inputs=("$corpus")
    if [ -d "$SOURCE/regressions/$target" ]; then inputs+=("$SOURCE/regressions/$target"); fi
    local start
    start=$(date +%s)
    TMPDIR="$scratch" "$FUZZ/normlab_fuzz_$target" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
        -dict="$SOURCE/dict/$target.dict" -artifact_prefix="$findings/" -timeout=30 -rss_limit_mb=2048 \
        -max_len="$(max_len_of "$target")" "${inputs[@]}" >"$log" 2>&1 || echo "exit $?" >>"$log"
    echo "$(($(date +%s) - start))" >"$NORMLAB_BUILD/logs/$target.seconds"
}

echo "normlab: fuzzing ${#targets[@]} targets for $FUZZ_SECONDS s each, $FUZZ_JOBS at a time"
running=0
for target in "${targets[@]}"; do
    if [ "$running" -ge "$FUZZ_JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
    fuzz_target "$target" &
    running=$((running + 1))
done
wait

# The table: executions from -print_final_stats, coverage from the last status line, findings as files.
failed=0
printf '%-14s %8s %12s %7s %7s %9s\n' target seconds executions cov ft findings
for target in "${targets[@]}"; do
    log="$NORMLAB_BUILD/logs/$target.log"
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    found=$(find "$NORMLAB_BUILD/findings/$target" -type f \
        \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
    if [ "$found" -gt 0 ] || grep -q '^exit ' "$log"; then failed=1; fi
    printf '%-14s %8s %12s %7s %7s %9s\n' "$target" "$(cat "$NORMLAB_BUILD/logs/$target.seconds")" \
        "${executions:-?}" "${cov:-?}" "${ft:-?}" "$found"
done
if [ "$failed" -ne 0 ]; then
    echo "normlab: FAILED: a fuzz target found something or stopped early; see build-fuzz/logs/ and" \
        "build-fuzz/findings/ (reproduce: build-fuzz/tests/fuzz/normlab_fuzz_TARGET FILE)" >&2
    exit 1
fi
echo "normlab: no findings (logs in build-fuzz/logs/)"
