#!/usr/bin/env bash
# The CUDA checks for a lent GPU machine (nvcc, python3 + torch, no package registry), in one call: the
# CUDA tests and selftest, device selection, NormLab on CUDA against PyTorch eager and torch.compile
# (tests/peer/run_comparison.py), the bridge under torchrun + NCCL at GPT-2 small and its oracle tests on
# the GPU, a per-kernel profile (ncu) and the window's cost. Uses the binaries scripts/device_bundle.sh put
# in .device/ when they load there, else builds. Each step has a time limit; everything goes to
# $OUT/results.tgz (repacked after each step, so a run cut short keeps what it measured) and summary.txt.
# The architecture presets (llama-small, gpt2-shape; llama-small on bpe:1024 tokens) and the feature norms
# (BatchNorm, PowerNorm) train on CUDA against the CPU, and the Hugging Face import's gradients are
# checked against transformers with NormLab on the GPU.
# The residual-stream schemes (B2T, LNS, ResiDual, DenseFormer, AttnRes) at 48 blocks train on both too.
# Usage: device_cuda.sh [STEP,STEP...]
#   (default: all of tests,selftest,auto,arch,schemes,precision,hf,bridge,oracle,profile,window,comparison)
set -uo pipefail
NORMLAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="$NORMLAB_ROOT/.device"
BUILD="${NORMLAB_BUILD:-$NORMLAB_ROOT/build-device}"
OUT="${OUT:-$BUILD/out}"
WORK="$BUILD/results"
mkdir -p "$WORK" "$OUT"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"

say() { echo "$*" | tee -a "$SUMMARY"; }
pack() { tar -czf "$OUT/results.tgz" -C "$WORK" . 2>/dev/null; }
# step NAME SECONDS COMMAND...: runs it with a limit, its output to $WORK/NAME.log, the last lines shown
step() {
    local name="$1" limit="$2"
    shift 2
    local started=$SECONDS
    timeout "$limit" "$@" >"$WORK/$name.log" 2>&1
    local status=$?
    say "== $name: exit $status in $((SECONDS - started)) s"
    tail -n "${TAIL_LINES:-6}" "$WORK/$name.log" | tee -a "$SUMMARY"
    pack
    return $status
}

STEPS=",${1:-tests,selftest,auto,arch,schemes,precision,hf,bridge,oracle,profile,window,comparison},"
wanted() { [[ "$STEPS" == *",$1,"* ]]; }
export LD_LIBRARY_PATH="$DEPS/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NORMLAB_RESOURCE_DIR="$NORMLAB_ROOT/resources"  # carried binaries name the build machine's folder
{
    nvidia-smi 2>&1
    nvcc --version 2>&1 | tail -2
    python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1
    uname -r
    nproc
} >"$WORK/machine.log"
say "machine: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"

CLI="$DEPS/bin/normlab-cli"
TESTS="$DEPS/bin/normlab_cuda_tests"
if [ -x "$CLI" ] && ! ldd "$CLI" "$TESTS" | grep -q "not found" && "$CLI" --help >/dev/null 2>&1; then
    say "binaries: carried ($(ldd "$CLI" | grep -E 'cublas|cudart' | awk '{print $3}' | tr '\n' ' '))"
else
    ldd "$CLI" "$TESTS" >"$WORK/ldd.log" 2>&1
    if [ ! -e "$DEPS/eigen3/Eigen/Core" ]; then
        echo "normlab: no dependency bundle in $DEPS; run scripts/device_bundle.sh where the packages are" >&2
        exit 2
    fi
    ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader |
        head -1 | tr -d '. ')}"
    step configure 120 cmake -S "$NORMLAB_ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DNORMLAB_GUI=OFF \
        -DNORMLAB_CUDA=ON -DNORMLAB_DEPS_DIR="$DEPS" -DCMAKE_CUDA_ARCHITECTURES="${ARCHITECTURES:-90}" || exit 1
    step build 420 cmake --build "$BUILD" -j "$(nproc)" --target normlab-cli normlab_cuda_tests || exit 1
    CLI="$BUILD/app/normlab-cli"
    TESTS="$BUILD/tests/normlab_cuda_tests"
fi

wanted tests && TAIL_LINES=12 step cuda_tests 150 "$TESTS" --gtest_brief=1 --gtest_output="json:$WORK/cuda_tests.json"
wanted selftest && step selftest 60 "$CLI" selftest --device cuda --json
if wanted auto; then
    step device_auto 60 "$CLI" train --preset quickstart --set device=auto --steps 20 \
        --out "$WORK/quickstart-auto" --overwrite
    rm -rf "$WORK/quickstart-auto/checkpoints"
fi

# curves_agree.py RUN_A RUN_B [TOLERANCE]: the largest relative difference of the loss over the steps both
# runs logged (at most TOLERANCE, default 5e-4), and, when the runs are not fp32, the largest difference of
# the emulated-precision telemetry (per block) and the loss scales, reported
cat >"$WORK/curves_agree.py" <<'PYTHON'
import json, sys
records = [{r["step"]: r for r in map(json.loads, open(f"{run}/metrics.jsonl")) if "loss" in r}
           for run in sys.argv[1:3]]
tolerance = float(sys.argv[3]) if len(sys.argv) > 3 else 5e-4
steps = sorted(set(records[0]) & set(records[1]))
loss = [{s: r[s]["loss"] for s in steps} for r in records]
worst = max(abs(loss[0][s] - loss[1][s]) / abs(loss[1][s]) for s in steps)
print(f"{len(steps)} steps, final loss {loss[0][steps[-1]]:.10f} (cuda) {loss[1][steps[-1]]:.10f} (cpu), "
      f"largest relative difference {worst:.2e} (tolerance {tolerance:.0e})")
fields = ["act_overflow", "act_underflow", "grad_overflow", "grad_underflow", "stream_headroom"]
pairs = [(s, f, a.get(f), b.get(f)) for s in steps
         for a, b in zip(records[0][s].get("layers", []), records[1][s].get("layers", [])) for f in fields]
for field in fields:
    gaps = [abs(a - b) for s, f, a, b in pairs if f == field and a is not None and b is not None]
    if gaps:
        print(f"  {field}: largest |cuda - cpu| {max(gaps):.3e} over {len(gaps)} values")
for field in ["loss_scale", "skipped_steps"]:
    values = [(records[0][s].get(field), records[1][s].get(field)) for s in steps if field in records[0][s]]
    if values:
        print(f"  {field}: {sum(a == b for a, b in values)}/{len(values)} steps equal, last {values[-1]}")
sys.exit(0 if worst <= tolerance else 1)
PYTHON
# compare_devices LABEL STEPS RUN [TOLERANCE]: trains RUN ("preset" or "preset:key=value") STEPS steps
# on the GPU and on the CPU, then checks the two loss curves agree (curves_agree.py)
compare_devices() {
    local label="$1" steps="$2" run="$3" tolerance="${4:-5e-4}"
    local preset="${run%%:*}" name="${run//[:=._]/-}" extra=()
    [ "$run" != "$preset" ] && extra=(--set "${run#*:}")
    for device in cuda cpu; do
        "$CLI" train --preset "$preset" "${extra[@]}" --steps "$steps" --set device="$device" \
            --out "$WORK/$name-$device" --overwrite --quiet >"$WORK/$name-$device.log" 2>&1
    done
    step "${label}_$name" 30 python3 "$WORK/curves_agree.py" "$WORK/$name-cuda" "$WORK/$name-cpu" "$tolerance"
}
if wanted arch; then  # the modern-architecture presets (and BPE tokens), the feature norms: 50 steps, GPU and CPU
    for run in llama-small gpt2-shape llama-small:data.tokenizer=bpe:1024 batchnorm-batch32 \
        batchnorm-batch2:model.norm_type=powernorm; do
        compare_devices arch 50 "$run"
    done
fi
if wanted schemes; then  # the residual-stream schemes at 48 blocks (some in fp16/bf16): 30 steps, GPU and CPU
    for run in deep-b2t deep-lns deep-resi-dual deep-denseformer deep-denseformer:model.denseformer_dilation=3 \
        deep-attn-res deep-attn-res:model.norm_placement=peri; do
        compare_devices scheme 30 "$run"
    done
    for run in deep-resi-dual:train.precision=fp16 deep-denseformer:train.precision=fp16 \
        deep-attn-res:train.precision=bf16; do
        compare_devices scheme 30 "$run" 1e-2
    done
fi
if wanted precision; then  # emulated bf16 / fp16 / fp8 on the GPU against the CPU, then its cost on the GPU
    for run in "quickstart bf16" "quickstart fp16 dynamic" "quickstart fp16 none" "llama-small bf16" \
        "quickstart fp8_e4m3 none"; do
        read -r preset format scale <<<"$run"
        name="precision-$preset-$format${scale:+-$scale}"
        for device in cuda cpu; do
            "$CLI" train --preset "$preset" --steps 50 --set device="$device" --set train.precision="$format" \
                ${scale:+--set train.loss_scale=$scale} --out "$WORK/$name-$device" --overwrite --quiet \
                >"$WORK/$name-$device.log" 2>&1
        done
        TAIL_LINES=8 step "$name" 30 python3 "$WORK/curves_agree.py" "$WORK/$name-cuda" "$WORK/$name-cpu" \
            "${PRECISION_TOLERANCE:-1e-2}"
    done
    read -ra GPT2 <<<"$(cd "$NORMLAB_ROOT/tests/peer" && python3 -c "from run_comparison import normlab_args
print(' '.join(normlab_args('gpt2', 1000000, 'cuda')))")"
    # bf16/fp16 products on tensor cores (native, the default) against emulation's fp32 products
    for round in 1 2; do
        for run in fp32 bf16 fp16 bf16:1 fp16:1; do
            format="${run%%:*}" fp32_products="${run#*:}"
            [ "$fp32_products" = "$run" ] && fp32_products=0
            TAIL_LINES=1 step "precision_bench_${format}_fp32products${fp32_products}_$round" 60 \
                env NORMLAB_CUDA_FP32_PRODUCTS="$fp32_products" "$CLI" bench "${GPT2[@]}" \
                --set train.precision="$format" --steps 10 --warmup 3
        done
    done
fi
wanted hf && TAIL_LINES=12 step hf_parity 150 env HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error \
    python3 "$NORMLAB_ROOT/tests/parity/hf_parity.py" --cli "$CLI" --device cuda

PEER="$NORMLAB_ROOT/tests/peer"
# GPT-2 small (124M parameters, seq 1024) under torchrun, DDP over NCCL on this one GPU
wanted bridge && TAIL_LINES=8 step bridge_overhead 120 env PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 \
    python3 -m torch.distributed.run --standalone --nproc_per_node=1 "$NORMLAB_ROOT/python/bench_overhead.py" --device cuda --models gpt2 \
    --width 768 --layers 12 --heads 12 --vocab 50257 --seq 1024 --batch 8 --steps 30 --repeats 2
wanted oracle && TAIL_LINES=4 step bridge_oracle 90 env NORMLAB_TEST_DEVICE=cuda HF_HUB_OFFLINE=1 PYTHONPATH="$NORMLAB_ROOT/python" \
    python3 -m pytest -q -p no:cacheprovider --rootdir "$NORMLAB_ROOT/python" "$NORMLAB_ROOT/python/tests/test_oracle.py"

if wanted profile; then  # where a GPT-2-small step's GPU time goes, kernel by kernel (telemetry off)
    read -ra GPT2 <<<"$(cd "$PEER" && python3 -c "from run_comparison import normlab_args
print(' '.join(normlab_args('gpt2', 1000000, 'cuda')))")"
    # PROFILE_PRECISION=bf16 (or fp16, fp8_e4m3) profiles that train.precision's step instead of fp32's
    TAIL_LINES=2 step profile_gpt2 150 ncu --clock-control none --metrics gpu__time_duration.sum --csv \
        --page raw "$CLI" bench "${GPT2[@]}" --set train.precision="${PROFILE_PRECISION:-fp32}" --steps 1 --warmup 1
    TAIL_LINES=30 step profile 30 python3 "$NORMLAB_ROOT/scripts/cuda_kernel_profile.py" "$WORK/profile_gpt2.log" \
        --steps 2
fi

if wanted window; then  # the desktop app (offscreen) against normlab-cli, both on the GPU
    GUI=/tmp/normlab-gui
    mkdir -p "$GUI" && tar -xzf "$DEPS/gui.tgz" -C "$GUI"
    export QT_PLUGIN_PATH="$GUI/plugins" QT_QPA_FONTDIR="$GUI/fonts"
    LD_LIBRARY_PATH="$GUI/lib:$LD_LIBRARY_PATH" step window_libs 30 bash -c "ldd '$GUI/app/normlab' | grep -v '=> /'; \
        QT_QPA_PLATFORM=offscreen '$GUI/app/normlab' --help | head -3"
    LD_LIBRARY_PATH="$GUI/lib:$LD_LIBRARY_PATH" NORMLAB_BUILD="$GUI" TAIL_LINES=5 step window_quickstart 100 \
        bash "$NORMLAB_ROOT/scripts/window_cost.sh" quickstart 600 3 device=cuda
    LD_LIBRARY_PATH="$GUI/lib:$LD_LIBRARY_PATH" NORMLAB_BUILD="$GUI" TAIL_LINES=5 step window_medium 100 \
        bash "$NORMLAB_ROOT/scripts/window_cost.sh" quickstart 300 3 device=cuda model.d_model=256 model.layers=8 \
        model.heads=8 model.d_ff=1024 model.seq_len=128 train.batch_size=16
fi

wanted comparison && TAIL_LINES=20 step comparison "${COMPARISON_SECONDS:-240}" python3 "$PEER/run_comparison.py" \
    --cli "$CLI" --device cuda --system-python python3 --pairs "${PAIRS:-1}" --steps 10 --warmup 3 \
    --json "$WORK/comparison.json" --shapes "${SHAPES:-tiny,small,medium,gpt2,large}"

say "done in $SECONDS s"
pack
