// normlab-cli: the headless front end (train, eval, bench, probe, presets, selftest, ...). Bad input is a
// message on stderr and exit code 2; an unexpected internal failure is exit code 1.
#include <cstring>
#include <iostream>
#include <string>

#include "app/cli/subcommands.h"
#include "engine/core/errors.h"
#include "engine/core/resource_dir.h"
#include "engine/core/version.h"
#include "engine/selfcheck/gpu_selftest.h"

namespace {
const char* kUsage =
    "normlab-cli: train and measure small Transformers with any norm placement, norm type and residual "
    "scheme\n"
    "\n"
    "usage: normlab-cli <command> [options]     (normlab-cli <command> --help for its options)\n"
    "       normlab-cli --version\n"
    "\n"
    "commands:\n"
    "  train      train a model and write a run folder (metrics.jsonl, events.jsonl, summary.json, ...)\n"
    "  eval       mean next-token loss of a checkpoint on a file of token sequences\n"
    "  bench      time training steps: steps/s, ms/step, tokens/s, GFLOP/s\n"
    "  probe      measure a freshly initialised model (Lemma 2, Figure 3, dependency, output change)\n"
    "  presets    list the presets\n"
    "  runs       list run folders: status, steps, losses, and the config keys that differ\n"
    "  compare    two groups of runs on one metric: means, 95% CIs, B - A paired by seed or Welch\n"
    "  export     run folders out: a tidy metrics table (CSV), or the window's charts as figures\n"
    "  sweep      plan and run grids of runs (here or on a cluster), then collect stability maps\n"
    "  selftest   check a compute backend (the GPU, or the fast CPU one) against the CPU reference\n"
    "  dump-grads write a checkpoint and the gradients of one batch (for the PyTorch parity test)\n";
}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
        std::strcmp(argv[1], "help") == 0) {
        std::cout << kUsage;
        return argc < 2 ? 2 : 0;
    }
    if (std::strcmp(argv[1], "--version") == 0) {
        std::cout << "normlab-cli: " << normlab::version_line() << "\nresources: " << normlab::resource_dir()
                  << "\n";
        return 0;
    }
    const std::string command = argv[1];
    normlab::install_gpu_selfcheck();  // a GPU is used only once it passed NormLab's self-check
    try {
        if (command == "train") return normlab::cli::run_train(argc, argv);
        if (command == "eval") return normlab::cli::run_eval(argc, argv);
        if (command == "bench") return normlab::cli::run_bench(argc, argv);
        if (command == "presets") return normlab::cli::run_presets(argc, argv);
        if (command == "runs") return normlab::cli::run_runs(argc, argv);
        if (command == "compare") return normlab::cli::run_compare(argc, argv);
        if (command == "export") return normlab::cli::run_export(argc, argv);
        if (command == "sweep") return normlab::cli::run_sweep(argc, argv);
        if (command == "probe") return normlab::cli::run_probe(argc, argv);
        if (command == "selftest") return normlab::cli::run_selftest(argc, argv);
        if (command == "dump-grads") return normlab::cli::run_dump_grads(argc, argv);
        std::cerr << "normlab-cli: unknown command '" << command << "'\n\n" << kUsage;
        return 2;
    } catch (const normlab::InputError& error) {
        std::cerr << "normlab-cli " << command << ": error: " << error.what() << "\n";
        return 2;
    } catch (const std::exception& error) {
        std::cerr << "normlab-cli " << command << ": internal error: " << error.what() << "\n";
        return 1;
    }
}
