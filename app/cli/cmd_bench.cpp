// `normlab-cli bench`: times training steps after a warm-up and prints medians as one JSON line.
// FLOPs count every matrix product of forward and backward (attention's q k^T and p v included).
#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>

#include <nlohmann/json.hpp>

#include "app/cli/cli_options.h"
#include "app/cli/commands.h"
#include "engine/core/errors.h"
#include "engine/train/trainer.h"

namespace normlab::cli {

namespace {
const char* kBenchHelp =
    "usage: normlab-cli bench (--config FILE | --preset NAME) [--set KEY=VALUE]... [--steps N] [--warmup N]\n"
    "\n"
    "Times N training steps (default 20) after N warm-up steps (default 3) and prints one JSON line:\n"
    "{\"steps_per_s\", \"ms_per_step\", \"tokens_per_s\", \"gflops\", \"threads\", \"device\"} (medians).\n"
    "Telemetry runs at the config's cadence (telemetry.every); validation is off while timing.\n"
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
}  // namespace

int run_bench(int argc, char** argv) {
    ArgReader reader(argc, argv, 2);
    ConfigSources sources;
    int64_t warmup = 3;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (sources.consume(flag, reader)) continue;
        if (flag == "--help" || flag == "-h") {
            std::cout << kBenchHelp << config_sources_help();
            return 0;
        } else if (flag == "--warmup") {
            warmup = reader.integer_of(flag, 0);
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

    std::vector<double> seconds;
    for (int64_t i = 0; i < warmup + timed && !trainer.finished(); ++i) {
        const auto start = std::chrono::steady_clock::now();
        trainer.step();
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (i >= warmup) seconds.push_back(elapsed);
    }
    if (seconds.empty()) throw InputError("the run diverged during warm-up; nothing to time");
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    const double tokens = static_cast<double>(config.train.batch_size) * config.model.seq_len;
    const double flops = training_flops(effective_model_config(config.model), config.train.batch_size,
                                        trainer.model().vocab());
    std::cout << nlohmann::json({{"steps_per_s", 1.0 / median},
                                 {"ms_per_step", median * 1e3},
                                 {"tokens_per_s", tokens / median},
                                 {"gflops", flops / median / 1e9},
                                 {"threads", trainer.backend().threads()},
                                 {"device", trainer.backend().device()},
                                 {"timed_steps", seconds.size()}})
                     .dump()
              << "\n";
    return 0;
}

}  // namespace normlab::cli
