// `normlab-cli bench`: times training steps after a warm-up and prints medians as one JSON line, with
// the peak resident memory; `--gemm` times the backend's own products at the model's linear-layer sizes
// (the GEMM limit the model's GFLOP/s is measured against); `--peak` adds the CPU's FMA peak measured in
// the same run and the share of it reached. FLOPs count every matrix product of forward and backward
// (attention's q k^T and p v included). On CUDA a step ends with host reads (loss, telemetry), so step
// times include the GPU's work; --gemm reads one value back after each shape.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/cli_options.h"
#include "app/cli/subcommands.h"
#include "engine/backend/cpu/fma_peak.h"
#include "engine/core/errors.h"
#include "engine/train/trainer.h"

namespace normlab::cli {

namespace {
const char* kBenchHelp =
    "usage: normlab-cli bench (--config FILE | --preset NAME) [--set KEY=VALUE]... [--steps N] [--warmup N]\n"
    "                         [--gemm] [--peak]\n"
    "\n"
    "Times N training steps (default 20) after N warm-up steps (default 3) and prints one JSON line:\n"
    "{\"steps_per_s\", \"ms_per_step\", \"tokens_per_s\", \"gflops\", \"threads\", \"device\", \"backend\",\n"
    "\"timed_steps\", \"peak_rss_mb\", \"host_bytes_per_step\", \"peak_device_mb\"} (medians;\n"
    "peak_rss_mb is the process's peak resident memory; on a GPU, host_bytes_per_step is the mean bytes a\n"
    "timed step copied to the host and peak_device_mb the most GPU memory the backend held; 0 on the CPU).\n"
    "Telemetry runs at the config's cadence (telemetry.every); validation is off while timing.\n"
    "\n"
    "--gemm times the backend's matrix products instead, at the model's linear-layer sizes (forward, dx and\n"
    "dW of every layer, N rounds after the warm-up ones), and prints {\"gemm_gflops\", \"threads\",\n"
    "\"device\", \"backend\"}: the GEMM limit the training step's gflops can be compared with.\n"
    "\n"
    "--peak (CPU only) first measures the CPU's peak in the same process: every backend thread runs\n"
    "independent fused multiply-add chains in the widest vectors the CPU has for about 0.5 s. It adds\n"
    "{\"peak_gflops\", \"peak_instructions\", \"share_of_peak\"} (gflops or gemm_gflops over the peak).\n"
    "\n";

// Matrix-product FLOPs of one training step (forward + backward = 3x forward).
double training_flops(const ModelConfig& m, int batch, int vocab) {
    const double n = static_cast<double>(batch) * m.seq_len;
    const double d = m.d_model;
    const double d_ff = m.theory_mode ? d : m.d_ff;
    const double projections = 2.0 * n * d * (3.0 * d + (m.theory_mode ? 0.0 : d) + 2.0 * d_ff);
    const double attention = 4.0 * batch * static_cast<double>(m.seq_len) * m.seq_len * d;
    const double head = 2.0 * n * d * vocab;
    return 3.0 * (m.layers * (projections + attention) + head);
}

double peak_rss_mb() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// One linear layer's sizes and how often the model has it.
struct LinearShape {
    int in, out, count;
};

// GFLOP/s of the backend's linear_forward + linear_backward (dx and dW) over the model's layers, each
// round timing every shape once (weighted by how often the model has it), the median round reported.
double gemm_gflops(Backend& backend, const ModelConfig& m, int batch, int vocab, int64_t warmup,
                   int64_t rounds) {
    const int n = batch * m.seq_len;
    const int d = m.d_model;
    std::vector<LinearShape> shapes = {{d, 3 * d, m.layers}, {d, vocab, 1}};
    if (!m.theory_mode) {
        shapes.push_back({d, d, m.layers});
        shapes.push_back({d, m.d_ff, m.layers});
        shapes.push_back({m.d_ff, d, m.layers});
    }
    const int widest = std::max({3 * d, m.d_ff, vocab});
    float* x = backend.allocate(static_cast<size_t>(n) * widest);
    float* y = backend.allocate(static_cast<size_t>(n) * widest);
    float* dx = backend.allocate(static_cast<size_t>(n) * widest);
    float* w = backend.allocate(static_cast<size_t>(widest) * widest);
    float* dw = backend.allocate(static_cast<size_t>(widest) * widest);
    backend.fill(x, 0.5f, static_cast<size_t>(n) * widest);
    backend.fill(y, 0.25f, static_cast<size_t>(n) * widest);
    backend.fill(w, 0.125f, static_cast<size_t>(widest) * widest);
    double flops = 0.0;
    for (const LinearShape& shape : shapes) flops += 6.0 * n * shape.in * shape.out * shape.count;
    std::vector<double> seconds;
    for (int64_t round = 0; round < warmup + rounds; ++round) {
        double total = 0.0;
        for (const LinearShape& shape : shapes) {
            const auto start = std::chrono::steady_clock::now();
            backend.linear_forward(y, x, w, nullptr, n, shape.in, shape.out);
            backend.linear_backward(dx, dw, nullptr, y, x, w, n, shape.in, shape.out, false);
            float last = 0.0f;
            backend.download(&last, dw, 1);  // waits for a GPU's queued products (a plain read on the CPU)
            total +=
                shape.count * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
        if (round >= warmup) seconds.push_back(total);
    }
    for (float* buffer : {x, y, dx, w, dw}) backend.release(buffer);
    std::sort(seconds.begin(), seconds.end());
    return flops / seconds[seconds.size() / 2] / 1e9;
}

// --peak's fields, when it was asked for: the peak and the share of it that `gflops` is.
void add_peak(nlohmann::json& line, const std::optional<FmaPeak>& peak, double gflops) {
    if (!peak) return;
    line["peak_gflops"] = peak->gflops;
    line["peak_instructions"] = peak->instructions;
    line["share_of_peak"] = gflops / peak->gflops;
}

// --gemm: the backend's GEMM rate on the model's linear shapes, the bound on a whole step's rate.
void print_gemm_rate(Trainer& trainer, const Config& config, int64_t warmup, int64_t timed,
                     const std::optional<FmaPeak>& peak) {
    const double limit = gemm_gflops(trainer.backend(), effective_model_config(config.model),
                                     config.train.batch_size, trainer.model().vocab(), warmup, timed);
    nlohmann::json line = {{"gemm_gflops", limit},
                           {"threads", trainer.backend().threads()},
                           {"device", trainer.backend().device()},
                           {"backend", trainer.backend().name()}};
    add_peak(line, peak, limit);
    std::cout << line.dump() << "\n";
}

// Times `timed` whole training steps after `warmup` untimed ones and prints their median rates.
void print_step_rates(Trainer& trainer, const Config& config, int64_t warmup, int64_t timed,
                      const std::optional<FmaPeak>& peak) {
    std::vector<double> seconds;
    uint64_t host_bytes_before = 0;
    for (int64_t i = 0; i < warmup + timed && !trainer.finished(); ++i) {
        if (i == warmup) host_bytes_before = trainer.backend().device_traffic().bytes_to_host;
        const auto start = std::chrono::steady_clock::now();
        trainer.step();
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (i >= warmup) seconds.push_back(elapsed);
    }
    if (seconds.empty()) throw InputError("the run diverged during warm-up; nothing to time");
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    const DeviceTraffic traffic = trainer.backend().device_traffic();
    const double tokens = static_cast<double>(config.train.batch_size) * config.model.seq_len;
    const double flops = training_flops(effective_model_config(config.model), config.train.batch_size,
                                        trainer.model().vocab());
    nlohmann::json line({{"steps_per_s", 1.0 / median},
                         {"ms_per_step", median * 1e3},
                         {"tokens_per_s", tokens / median},
                         {"gflops", flops / median / 1e9},
                         {"threads", trainer.backend().threads()},
                         {"device", trainer.backend().device()},
                         {"backend", trainer.backend().name()},
                         {"timed_steps", seconds.size()},
                         {"peak_rss_mb", peak_rss_mb()},
                         {"host_bytes_per_step",
                          (traffic.bytes_to_host - host_bytes_before) / static_cast<double>(seconds.size())},
                         {"peak_device_mb", traffic.peak_device_bytes / 1048576.0}});
    add_peak(line, peak, flops / median / 1e9);
    std::cout << line.dump() << "\n";
}
}  // namespace

int run_bench(int argc, char** argv) {
    ArgReader reader(argc, argv, 2);
    ConfigSources sources;
    int64_t warmup = 3;
    bool gemm = false;
    bool peak = false;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (sources.consume(flag, reader)) continue;
        if (flag == "--help" || flag == "-h") {
            std::cout << kBenchHelp << config_sources_help();
            return 0;
        } else if (flag == "--warmup") {
            warmup = reader.integer_of(flag, 0);
        } else if (flag == "--gemm") {
            gemm = true;
        } else if (flag == "--peak") {
            peak = true;
        } else {
            throw InputError("unknown option '" + flag + "'; see normlab-cli bench --help");
        }
    }
    const int64_t timed = sources.steps.value_or(20);
    if (timed < 1) throw InputError("--steps must be at least 1 for a benchmark");
    if (warmup + timed > std::numeric_limits<int>::max()) {
        throw InputError("--warmup + --steps must be at most " +
                         std::to_string(std::numeric_limits<int>::max()) + " steps in all, got " +
                         std::to_string(warmup + timed));
    }
    ConfigSources run_sources = sources;
    run_sources.steps.reset();
    Config config = run_sources.resolve();
    config.train.steps = static_cast<int>(warmup + timed);
    config.telemetry.val_every = 0;
    Trainer trainer(config);
    if (peak && trainer.backend().device() != "cpu") {
        throw InputError("--peak measures the CPU's FMA peak; this run is on " + trainer.backend().device() +
                         " (use --set device=cpu, or leave out --peak)");
    }
    // measured before the steps, on as many threads as the backend has
    const std::optional<FmaPeak> fma_peak =
        peak ? std::optional(measure_fma_peak(trainer.backend().threads())) : std::nullopt;
    if (gemm)
        print_gemm_rate(trainer, config, warmup, timed, fma_peak);
    else
        print_step_rates(trainer, config, warmup, timed, fma_peak);
    return 0;
}

}  // namespace normlab::cli
