// `normlab-cli selftest`: the backend self-check run now (engine/selfcheck/selftest.h) on the GPU, whose
// cached verdict it replaces, or on the fast CPU backend; prints the report as a table or JSON and exits
// 0 when every value agrees with the CPU reference, 1 on a mismatch.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "app/cli/cli_options.h"
#include "app/cli/subcommands.h"
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/devices.h"
#include "engine/core/errors.h"
#include "engine/selfcheck/gpu_selftest.h"

namespace normlab::cli {

namespace {

const char* kHelp =
    "usage: normlab-cli selftest [--device cpu|cuda] [--json]\n"
    "\n"
    "Checks a compute backend against the CPU reference now: four tiny models (Pre-LN LayerNorm with\n"
    "QK-norm and z-loss, Post-LN RMSNorm with Admin, an encoder-decoder, Peri-LN DyT) train 3 steps on\n"
    "both from the same seed, and the loss, telemetry, every gradient, update and parameter must agree\n"
    "within relative 1e-4 (1e-3 for variance ratios). Prints one row per model and quantity with its\n"
    "worst error; exits 0 when everything agrees, 1 on a mismatch, 2 on bad input.\n"
    "\n"
    "  --device cuda  GPU 0: the check device=cuda and device=auto run on a GPU's first use; this run\n"
    "                 ignores the cached verdict and replaces it (docs/cuda.md)\n"
    "  --device cpu   the fast CPU backend (any machine)\n"
    "                 default: cuda when a GPU answers, else cpu\n"
    "  --json         the report as JSON\n";

struct SelfTestOptions {
    std::string device;
    bool json = false;
};

SelfTestOptions parse_options(int argc, char** argv) {
    ArgReader reader(argc, argv, 2);
    SelfTestOptions options;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--device") {
            options.device = reader.value_of(flag);
            if (options.device != "cpu" && options.device != "cuda")
                throw InputError("--device must be cpu or cuda, not '" + options.device + "'");
        } else if (flag == "--json") {
            options.json = true;
        } else {
            throw InputError("unknown option '" + flag + "'; see normlab-cli selftest --help");
        }
    }
    if (options.device.empty()) options.device = list_devices()[1].available ? "cuda" : "cpu";
    return options;
}

// The GPU's report, its verdict cached (`cached_in`); no GPU is bad input, said plainly.
SelfTestReport check_gpu(std::string& cached_in) {
    try {
        return run_gpu_selftest_now(&cached_in);
    } catch (const ResourceError& error) {
        throw ResourceError(std::string("--device cuda: ") + error.what() +
                            "; --device cpu checks the CPU backend instead");
    }
}

std::string worst_at(const SelfTestCheck& check) {
    return "step " + std::to_string(check.worst_step) + ": " + check.worst.what;
}

void print_table(const SelfTestReport& report, const std::string& cached_in) {
    std::printf("checked:   %s\nreference: %s\n\n", report.candidate.c_str(), report.reference.c_str());
    size_t model_width = 5;
    for (const SelfTestCheck& check : report.checks) model_width = std::max(model_width, check.model.size());
    const int width = static_cast<int>(model_width);
    std::printf("%-*s  %-10s  %-11s  %-9s  %-7s  %s\n", width, "model", "check", "worst error", "tolerance",
                "verdict", "worst at");
    for (const SelfTestCheck& check : report.checks) {
        std::printf("%-*s  %-10s  %-11s  %-9s  %-7s  %s\n", width, check.model.c_str(),
                    check.quantity.c_str(), format_relative(check.worst.error).c_str(),
                    format_relative(check.worst.tolerance).c_str(), check.passed() ? "pass" : "FAIL",
                    worst_at(check).c_str());
    }
    if (report.passed()) {
        std::printf("\npassed: every value within its tolerance (%.2f s)\n", report.seconds);
    } else {
        std::printf("\nFAILED: %s (%.2f s)\n", report.first_difference.c_str(), report.seconds);
    }
    if (!cached_in.empty()) std::printf("verdict cached in %s\n", cached_in.c_str());
}

void print_json(const SelfTestReport& report, const std::string& cached_in) {
    nlohmann::json checks = nlohmann::json::array();
    for (const SelfTestCheck& check : report.checks) {
        checks.push_back({{"model", check.model},
                          {"quantity", check.quantity},
                          {"worst_error", check.worst.error},
                          {"tolerance", check.worst.tolerance},
                          {"passed", check.passed()},
                          {"worst_at", worst_at(check)},
                          {"compared", check.compared}});
    }
    const nlohmann::json document = {{"checked", report.candidate},
                                     {"reference", report.reference},
                                     {"passed", report.passed()},
                                     {"first_difference", report.first_difference},
                                     {"seconds", report.seconds},
                                     {"cached_in", cached_in},
                                     {"checks", checks}};
    std::cout << document.dump(2) << "\n";
}

}  // namespace

int run_selftest(int argc, char** argv) {
    for (int i = 2; i < argc; ++i) {
        if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
            std::cout << kHelp;
            return 0;
        }
    }
    const SelfTestOptions options = parse_options(argc, argv);
    std::string cached_in;
    SelfTestReport report;
    if (options.device == "cuda") {
        report = check_gpu(cached_in);
    } else {
        CpuBackend cpu(0);
        report = run_backend_selftest(cpu);
    }
    if (options.json) {
        print_json(report, cached_in);
    } else {
        print_table(report, cached_in);
    }
    return report.passed() ? 0 : 1;
}

}  // namespace normlab::cli
