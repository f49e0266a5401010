#!/usr/bin/env python3
# Runs the CPU speed comparison (docs/performance.md) side by side and prints two Markdown tables:
# NormLab (median of 3 interleaved runs with telemetry every step and off, the GEMM limit, peak RSS)
# against the newest PyTorch (eager and torch.compile, in a virtual environment) and Debian's
# python3-torch with OpenBLAS, each at its best thread count, and the ceiling PyTorch's own fp32 GEMM (MKL)
# puts on any implementation built on these products: the step rate if every FLOP ran at its rate and
# nothing else cost time.
# With --device cuda: NormLab's CUDA backend against PyTorch (eager, compile) on the same GPU.
import argparse
import json
import os
import subprocess
import sys
from collections import namedtuple
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from shapes import SHAPES  # noqa: E402  (after the path is set)

# One shape of the CPU comparison: NormLab's run and GEMM limit, each peer's best run (None if absent) and
# PyTorch's GEMM rate (torch_gemm.py).
CpuRow = namedtuple("CpuRow", "name normlab gemm debian eager compiled ceiling")


def normlab_args(name, telemetry_every, device="cpu"):
    d, layers, heads, seq, batch = SHAPES[name]
    sets = {
        "device": device,
        "data.task": "copy", "data.symbols": 63, "model.norm_placement": "pre", "model.norm_type": "layernorm",
        "train.optimizer": "adam", "telemetry.every": telemetry_every, "model.d_model": d, "model.layers": layers,
        "model.heads": heads, "model.d_ff": 4 * d, "model.seq_len": seq, "train.batch_size": batch,
    }
    args = []
    for key, value in sets.items():
        args += ["--set", f"{key}={value}"]
    return args


def run_json_lines(command, env=None, required=True):
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        if not required:
            print(f"skipped (failed): {' '.join(command)}\n{result.stderr[-2000:]}", file=sys.stderr)
            return []
        sys.exit(f"failed: {' '.join(command)}\n{result.stderr}")
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def normlab(cli, name, steps, warmup, device="cpu", pairs=3):
    """NormLab with telemetry every step and off, in `pairs` interleaved pairs: the median run of each, and
    in on["telemetry_cost"] the median over pairs of on / off step time - 1 (a shared machine's drift
    moves both runs of a pair alike)."""
    env = dict(os.environ, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "PASSIVE"))
    timing = ["--steps", str(steps), "--warmup", str(warmup)]
    ons, offs = [], []
    for _ in range(pairs):
        ons.append(run_json_lines([cli, "bench", *normlab_args(name, 1, device), *timing], env)[0])
        offs.append(run_json_lines([cli, "bench", *normlab_args(name, 1000000, device), *timing], env)[0])
    gemm = run_json_lines([cli, "bench", "--gemm", *normlab_args(name, 1, device), *timing], env)[0]

    def median_run(runs):
        return sorted(runs, key=lambda run: run["steps_per_s"])[len(runs) // 2]

    on, off = dict(median_run(ons)), median_run(offs)
    costs = sorted(a["ms_per_step"] / b["ms_per_step"] - 1.0 for a, b in zip(ons, offs))
    on["telemetry_cost"] = costs[len(costs) // 2]
    on["runs_steps_per_s"] = [run["steps_per_s"] for run in ons]
    return on, off, gemm


def peer(python, name, modes, threads, steps, warmup, env_extra, device="cpu", required=True):
    env = dict(os.environ, **env_extra)
    command = [python, str(HERE / "torch_peer.py"), "--shapes", name, "--modes", modes, "--threads", threads,
               "--steps", str(steps), "--warmup", str(warmup), "--device", device]
    return best_per_mode(run_json_lines(command, env, required))


def gemm_ceiling(python, name, steps, warmup):
    """PyTorch's best fp32 GEMM rate at the model's linear-layer sizes (tests/peer/torch_gemm.py)."""
    command = [python, str(HERE / "torch_gemm.py"), "--shapes", name, "--threads", "1,2", "--rounds", str(steps),
               "--warmup", str(warmup)]
    return max(run_json_lines(command), key=lambda line: line["gemm_gflops"])


def best_per_mode(lines):
    best = {}
    for line in lines:
        if line["steps_per_s"] > best.get(line["mode"], {"steps_per_s": 0.0})["steps_per_s"]:
            best[line["mode"]] = line
    return best


def main():
    parser = argparse.ArgumentParser(description="NormLab vs PyTorch training speed on the CPU (docs/performance.md)"
                                                 " or, with --device cuda, on a GPU (docs/cuda.md)")
    parser.add_argument("--cli", required=True, help="path to normlab-cli")
    parser.add_argument("--venv-python", help="python of the virtual environment with the newest torch")
    parser.add_argument("--system-python", default="/usr/bin/python3", help="python with Debian's python3-torch")
    parser.add_argument("--shapes", help="comma-separated (default: tiny,small,medium,deep; with --device cuda: "
                                             "tiny,small,medium,large,gpt2)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--json", help="also write every measurement to this file")
    parser.add_argument("--pairs", type=int, default=3,
                        help="interleaved NormLab runs with telemetry every step and off (median of each)")
    parser.add_argument("--peak-tflops", type=float, default=67.0,
                        help="with --device cuda: the card's fp32 (non-tensor-core) peak for model FLOP "
                             "utilisation; 67 is the H100 SXM and H200 datasheet figure")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="cuda: NormLab's CUDA backend vs PyTorch on the same GPU (docs/cuda.md)")
    args = parser.parse_args()
    if args.device == "cuda":
        return compare_on_cuda(args)
    args.shapes = args.shapes or "tiny,small,medium,deep"

    rows, raw = [], []
    for name in args.shapes.split(","):
        on, off, gemm = normlab(args.cli, name, args.steps, args.warmup, pairs=args.pairs)
        debian = peer(args.system_python, name, "eager", "1,2", args.steps, args.warmup,
                      {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "2"})
        newest, ceiling = {}, None
        if args.venv_python:
            newest = peer(args.venv_python, name, "eager,compile", "1,2", args.steps, args.warmup, {})
            ceiling = gemm_ceiling(args.venv_python, name, args.steps, args.warmup)
        raw.append({"shape": name, "normlab": on, "normlab_telemetry_off": off, "gemm": gemm, "debian_torch": debian,
                    "newest_torch": newest, "newest_torch_gemm": ceiling})
        rows.append(CpuRow(name, on, gemm, debian.get("eager"), newest.get("eager"), newest.get("compile"), ceiling))
        print(f"measured {name}", file=sys.stderr, flush=True)

    def peer_cells(ours, theirs):
        if not theirs:
            return ["-", "-"]
        return [f"{theirs['steps_per_s']:.2f} ({theirs['threads']}t)", f"{ours / theirs['steps_per_s']:.2f}x"]

    version = next((row.eager["torch"] for row in rows if row.eager), "newest")
    header = ["shape", "NormLab steps/s", f"torch {version} eager", "ratio", f"torch {version} compile", "ratio",
              "torch 1.13 OpenBLAS", "ratio", "GEMM share", "telemetry cost", "peak RSS MB"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, on, gemm, debian, eager, compiled, _ in rows:
        ours = on["steps_per_s"]
        cells = [name, f"{ours:.2f}"]
        cells += peer_cells(ours, eager) + peer_cells(ours, compiled) + peer_cells(ours, debian)
        cells.append(f"{on['gflops']:.0f} / {gemm['gemm_gflops']:.0f} GFLOP/s = {on['gflops'] / gemm['gemm_gflops']:.0%}")
        cells.append(f"{on['telemetry_cost']:+.1%}")
        cells.append(f"{on['peak_rss_mb']:.0f}")
        print("| " + " | ".join(cells) + " |")
    print_ceilings(rows, version)
    if args.json:
        Path(args.json).write_text(json.dumps(raw, indent=1))
    return 0


def print_ceilings(rows, version):
    """A second table: what 1.5x eager asks of the whole step, against the ceiling PyTorch's own GEMM puts
    on it (every FLOP of the step at that GEMM's rate, nothing else costing time) and NormLab's GEMM."""
    rows = [row for row in rows if row.eager and row.ceiling]
    if not rows:
        return
    header = ["shape", "1.5x eager needs", f"torch {version} GEMM alone", "its ceiling", "NormLab GEMM alone",
              "NormLab whole step"]
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, on, gemm, _, eager, _, ceiling in rows:
        flops_per_step = on["gflops"] / on["steps_per_s"]
        needed = 1.5 * eager["steps_per_s"]
        cells = [name, f"{needed:.2f} steps/s = {needed * flops_per_step:.0f} GFLOP/s",
                 f"{ceiling['gemm_gflops']:.0f} GFLOP/s ({ceiling['threads']}t)",
                 f"{ceiling['gemm_gflops'] / flops_per_step:.2f} steps/s", f"{gemm['gemm_gflops']:.0f} GFLOP/s",
                 f"{on['gflops']:.0f} GFLOP/s"]
        print("| " + " | ".join(cells) + " |")


def compare_on_cuda(args):
    rows, raw = [], []
    for name in (args.shapes or "tiny,small,medium,large,gpt2").split(","):
        on, off, gemm = normlab(args.cli, name, args.steps, args.warmup, "cuda", args.pairs)
        if on["device"] != "cuda":
            sys.exit(f"normlab-cli bench ran on {on['device']}, not cuda")
        # torch.compile needs Triton and may be missing: its column then reads "-"
        torch_gpu = peer(args.system_python, name, "eager", "1", args.steps, args.warmup, {}, "cuda")
        torch_gpu.update(peer(args.system_python, name, "compile", "1", args.steps, args.warmup, {}, "cuda", False))
        raw.append({"shape": name, "normlab": on, "normlab_telemetry_off": off, "gemm": gemm, "torch": torch_gpu,
                    "peak_tflops": args.peak_tflops})
        rows.append((name, on, off, gemm, torch_gpu.get("eager"), torch_gpu.get("compile")))
        print(f"measured {name}", file=sys.stderr, flush=True)
        if args.json:  # after every shape, so a run cut short still leaves what it measured
            Path(args.json).write_text(json.dumps(raw, indent=1))
    print_cuda_speed(rows, args.peak_tflops)
    print()
    print_cuda_costs(rows)
    return 0


def print_cuda_speed(rows, peak_tflops):
    """Steps/s and tokens/s of NormLab and PyTorch, their ratio, and each one's model FLOP utilisation
    (the model's training FLOPs per step, counted once for all three, over the card's fp32 peak)."""
    version = next((r[4]["torch"] for r in rows if r[4]), "?")
    header = ["shape", "NormLab steps/s", "tokens/s", "MFU", f"torch {version} eager", "ratio", "MFU",
              f"torch {version} compile", "ratio", "MFU"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, on, _, _, eager, compiled in rows:
        ours = on["steps_per_s"]
        flops_per_step = on["gflops"] * 1e9 / ours

        def mfu(steps_per_s):
            return f"{steps_per_s * flops_per_step / (peak_tflops * 1e12):.1%}"

        cells = [name, f"{ours:.2f}", f"{on['tokens_per_s']:.0f}", mfu(ours)]
        for theirs in (eager, compiled):
            if theirs:
                cells += [f"{theirs['steps_per_s']:.2f}", f"{ours / theirs['steps_per_s']:.2f}x",
                          mfu(theirs["steps_per_s"])]
            else:
                cells += ["-", "-", "-"]
        print("| " + " | ".join(cells) + " |")


def print_cuda_costs(rows):
    """Where the time and memory go: NormLab's GEMM share, telemetry's cost and its bytes to the host per
    step (every step against off), and the peak GPU memory of NormLab and of PyTorch eager."""
    header = ["shape", "GEMM share", "telemetry cost", "host bytes/step (telemetry every step / off)",
              "peak GPU MiB NormLab", "peak GPU MiB torch eager", "peak GPU MiB torch compile"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, on, off, gemm, eager, compiled in rows:
        cells = [name, f"{on['gflops']:.0f} / {gemm['gemm_gflops']:.0f} GFLOP/s = {on['gflops'] / gemm['gemm_gflops']:.0%}",
                 f"{on['telemetry_cost']:+.1%}",
                 f"{on.get('host_bytes_per_step', 0):.0f} / {off.get('host_bytes_per_step', 0):.0f}",
                 f"{on.get('peak_device_mb', 0):.0f}"]
        cells += [f"{theirs.get('peak_device_mb', 0):.0f}" if theirs else "-" for theirs in (eager, compiled)]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
