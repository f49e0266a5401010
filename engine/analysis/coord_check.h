// muP's coordinate check (microsoft/mup's README; Yang et al. 2022, Tensor Programs V, Figure 5): the
// same model trained a few steps at several widths, each block's coordinate sizes read from every step's
// telemetry. Under muP they stay flat with width; under SP they grow with width once a step was taken.
#pragma once
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/config/config.h"

namespace normlab {

// The measured quantities, in the order of CoordCheckResult::values: per block, or per model (one value).
struct CoordQuantity {
    std::string_view name;
    std::string_view meaning;
    bool per_block = true;
};
inline constexpr std::array<CoordQuantity, 4> kCoordQuantities{{
    {"resid_rms", "RMS of a block's output residual sum, sqrt(E||s||^2 / d)", true},
    {"q_rms", "RMS of the queries entering attention", true},
    {"attn_max_logit", "the largest attention logit of a block", true},
    {"logit_max", "the largest output logit", false},
}};

struct CoordCheckSettings {
    std::vector<int> widths;  // d_model of each model; d_ff keeps the config's d_ff / d_model
    int steps = 5;            // optimizer steps; step t's values are measured in its forward pass
    int seeds = 1;            // seeds train.seed .. + seeds - 1, averaged
};

struct CoordCheckResult {
    std::vector<int> widths;
    int steps = 0, seeds = 0, blocks = 0;
    Parametrization parametrization = Parametrization::Sp;
    int base_width = 0;
    // values[q][w][t][b]: quantity q at width w, step t + 1, block b (model-level: one b), seed mean
    std::vector<std::vector<std::vector<std::vector<double>>>> values;
    // exponents[q][t]: the least-squares slope of log(value) against log(width), values averaged over
    // blocks: 0 when the quantity does not change with width, 1 when it grows in proportion
    std::vector<std::vector<double>> exponents;
};

// Validates every width's config first (InputError naming the width, e.g. heads not dividing it).
// A run that diverges contributes what it measured before; its missing steps are NaN.
CoordCheckResult coord_check(const Config& config, const CoordCheckSettings& settings);

nlohmann::json to_json(const CoordCheckResult& result);
// DIR/coord_check.json read back (the window's chart): InputError naming the file and what is wrong
// (missing, not JSON, a field of the wrong type or size); a `null` value reads as NaN.
inline constexpr const char* kCoordCheckFileName = "coord_check.json";
CoordCheckResult read_coord_check(const std::string& dir);

}  // namespace normlab
