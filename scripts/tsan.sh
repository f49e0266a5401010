#!/usr/bin/env bash
# ThreadSanitizer pass (docs/reliability.md#threads): builds the engine, the CLI and the ui tests that run
# threads with -fsanitize=thread into build-tsan/ (without CUDA) and runs the tests that start, pause,
# step and stop the engine thread, change runs live, switch devices, watch run folders while they are
# written and run sweeps, under the suppressions of scripts/tsan.supp (each with its reason).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup_common.sh"

normlab_install_packages "${NORMLAB_BUILD_PACKAGES[@]}"
NORMLAB_BUILD="$NORMLAB_ROOT/build-tsan"
UI_TESTS=(worker open_runs new_sweep window dashboard)
targets=(normlab_engine_tests normlab-cli)
for name in "${UI_TESTS[@]}"; do targets+=("normlab_ui_test_$name"); done
cmake -S "$NORMLAB_ROOT" -B "$NORMLAB_BUILD" -DNORMLAB_SANITIZE=thread -DNORMLAB_CUDA=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$NORMLAB_BUILD.configure.log" 2>&1 ||
    { cat "$NORMLAB_BUILD.configure.log"; exit 1; }
started=$SECONDS
cmake --build "$NORMLAB_BUILD" -j "$NORMLAB_JOBS" --target "${targets[@]}"
echo "normlab: ThreadSanitizer build took $((SECONDS - started)) s"

# OMP_THREAD_LIMIT=1 (which caps even the reference backend's omp_set_num_threads): Debian's libgomp is
# not instrumented, so TSan cannot see its barriers and would report every OpenMP loop; the threads under
# test are the engine's own (the fast backend's task pool, the run control, the window's engine thread,
# the folder readers). ignore_noninstrumented_modules: what Debian's Qt and glib do inside themselves
# is not checked (they are not instrumented); scripts/tsan.supp lists the rest, each with its reason.
export OMP_NUM_THREADS=1 OMP_THREAD_LIMIT=1
export TSAN_OPTIONS="suppressions=$NORMLAB_ROOT/scripts/tsan.supp ignore_noninstrumented_modules=1 halt_on_error=1 second_deadlock_stack=1"
export QT_QPA_PLATFORM=offscreen
started=$SECONDS
"$NORMLAB_BUILD/tests/normlab_engine_tests" \
    --gtest_filter='TaskPool.*:RunControl.*:BackendSwitch.*:LineTailer.*:RunFolderReader.*:Trainer*:FastOps*:ChunkCount.*'
for name in "${UI_TESTS[@]}"; do
    "$NORMLAB_BUILD/tests/ui/normlab_ui_test_$name"
done
echo "normlab: ThreadSanitizer tests ran clean in $((SECONDS - started)) s"
