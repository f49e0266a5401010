// `normlab-cli probe --coord-check`: muP's coordinate check (engine/analysis/coord_check.h) over a list of
// widths, written to DIR/coord_check.json and printed as one table per quantity (width by step, the
// block mean) with the growth exponent against width under it.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/cli_options.h"
#include "app/cli/subcommands.h"
#include "engine/analysis/coord_check.h"
#include "engine/core/errors.h"
#include "engine/sweep/sweep_plan.h"

namespace normlab::cli {

namespace {
const char* kCoordHelp =
    "usage: normlab-cli probe --coord-check (--config FILE | --preset NAME) [--set KEY=VALUE]...\n"
    "                         --widths W1,W2,... [--steps N] [--seeds S] --out DIR [--overwrite]\n"
    "\n"
    "muP's coordinate check: trains the model N steps (default 5) at each width (model.d_model = W,\n"
    "model.d_ff in the config's ratio to d_model, model.heads unchanged, so each head widens) with\n"
    "telemetry every step, S seeds each (default 1, averaged), and reports per block and step the RMS of\n"
    "the residual stream and of the queries and the largest attention logit, and the largest output\n"
    "logit. model.base_width stays the config's (0: the config's d_model), so model.parametrization=mup\n"
    "moves its multipliers with width. Under muP the sizes stay flat with width; under sp they grow once\n"
    "a step was taken: each table's last line is the slope of log(size) against log(width) per step.\n"
    "\n"
    "Writes DIR/coord_check.json (docs/formats.md#coord_checkjson).\n"
    "\n";

struct CoordOptions {
    ConfigSources sources;
    CoordCheckSettings settings;
    std::string out;
    bool overwrite = false;
};

std::vector<int> widths_from_text(const std::string& text) {
    std::vector<int> widths;
    for (const auto& value : values_from_text(text)) {
        if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 65536)
            throw InputError(
                "--widths takes whole numbers from 1 to 65536 separated by commas, e.g. "
                "64,128,256; got '" +
                text + "'");
        widths.push_back(value.get<int>());
    }
    return widths;
}

CoordOptions read_coord_options(int argc, char** argv) {
    ArgReader reader(argc, argv, 2);
    CoordOptions options;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--coord-check") continue;
        if (flag == "--steps") {  // before the config sources, which read --steps as train.steps
            options.settings.steps = static_cast<int>(reader.integer_of(flag, 1, 10000));
        } else if (options.sources.consume(flag, reader)) {
            continue;
        } else if (flag == "--widths") {
            options.settings.widths = widths_from_text(reader.value_of(flag));
        } else if (flag == "--seeds") {
            options.settings.seeds = static_cast<int>(reader.integer_of(flag, 1, 100));
        } else if (flag == "--out") {
            options.out = reader.value_of(flag);
        } else if (flag == "--overwrite") {
            options.overwrite = true;
        } else {
            throw InputError("unknown option '" + flag +
                             "' for probe --coord-check; see normlab-cli probe "
                             "--coord-check --help");
        }
    }
    if (options.settings.widths.size() < 2)
        throw InputError(
            "--widths W1,W2,... is required: at least two widths (model.d_model), e.g. 64,128,256");
    if (options.out.empty()) throw InputError("--out DIR is required: the folder for coord_check.json");
    return options;
}

void print_result(const CoordCheckResult& result) {
    for (size_t q = 0; q < kCoordQuantities.size(); ++q) {
        std::printf("%s (%s%s)\n%8s", std::string(kCoordQuantities[q].name).c_str(),
                    std::string(kCoordQuantities[q].meaning).c_str(),
                    kCoordQuantities[q].per_block ? ", mean over blocks" : "", "width");
        for (int t = 1; t <= result.steps; ++t) std::printf(" %10s", ("step " + std::to_string(t)).c_str());
        std::printf("\n");
        for (size_t w = 0; w < result.widths.size(); ++w) {
            std::printf("%8d", result.widths[w]);
            for (const auto& blocks : result.values[q][w]) {
                double total = 0.0;
                for (double v : blocks) total += v;
                std::printf(" %10.4g", total / static_cast<double>(blocks.size()));
            }
            std::printf("\n");
        }
        std::printf("%8s", "exponent");
        for (double e : result.exponents[q]) std::printf(" %+10.3f", e);
        std::printf("\n\n");
    }
}
}  // namespace

bool wants_coord_check(int argc, char** argv) {
    return has_flag(argc, argv, "--coord-check");
}

int run_coord_check_probe(int argc, char** argv) {
    if (asks_for_help(argc, argv)) {
        std::cout << kCoordHelp << config_sources_help();
        return 0;
    }
    CoordOptions options = read_coord_options(argc, argv);
    const std::string path = result_path(options.out, kCoordCheckFileName, options.overwrite);
    const Config config = options.sources.resolve();
    const CoordCheckResult result = coord_check(config, options.settings);
    print_result(result);
    nlohmann::json document = to_json(result);
    document["config"] = config_to_json(config);
    write_result(options.out, path, document.dump(2) + "\n");
    return 0;
}

}  // namespace normlab::cli
