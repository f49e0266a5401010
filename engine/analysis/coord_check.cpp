// coord_check: one short run per width and seed with telemetry every step, read into the quantity table.
#include "engine/analysis/coord_check.h"

#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/train/trainer.h"

namespace normlab {

namespace {
// The config at one width: d_model = width, d_ff in the same ratio, the base width held at the
// config's (so muP's multipliers move with width), telemetry every step and no validation.
Config config_at_width(const Config& config, int width, int steps) {
    Config at = config;
    at.model.d_model = width;
    at.model.d_ff = std::max(1, static_cast<int>(std::lround(static_cast<double>(config.model.d_ff) * width /
                                                             config.model.d_model)));
    if (at.model.base_width == 0) at.model.base_width = config.model.d_model;
    at.train.steps = steps;
    at.telemetry.every = 1;
    at.telemetry.val_every = 0;
    try {
        validate(at);
    } catch (const InputError& error) {
        throw InputError("coord check at width " + std::to_string(width) + ": " + error.what());
    }
    return at;
}

// Quantity q of one step's record, per block (or the model's one value).
std::vector<double> read_quantity(size_t q, const StepRecord& record) {
    std::vector<double> out;
    if (!kCoordQuantities[q].per_block) {
        out.push_back(record.telemetry ? record.telemetry->logit_max : std::nan(""));
        return out;
    }
    for (const LayerTelemetry& layer : record.layers) {
        if (q == 0) out.push_back(std::sqrt(layer.resid));
        if (q == 1) out.push_back(layer.q_rms);
        if (q == 2) out.push_back(layer.attn_max_logit);
    }
    return out;
}

double block_mean(const std::vector<double>& values) {
    double total = 0.0;
    for (double v : values) total += v;
    return values.empty() ? std::nan("") : total / static_cast<double>(values.size());
}

// Least-squares slope of log(y) on log(x) over the finite, positive points (NaN with fewer than two).
double log_log_slope(const std::vector<int>& x, const std::vector<double>& y) {
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        if (!(y[i] > 0.0) || !std::isfinite(y[i])) continue;
        const double lx = std::log(static_cast<double>(x[i])), ly = std::log(y[i]);
        n += 1;
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
    }
    const double denominator = n * sxx - sx * sx;
    return n >= 2 && denominator > 0 ? (n * sxy - sx * sy) / denominator : std::nan("");
}

// Per step, the slope of one quantity's block means ([width][step][block]) against width.
std::vector<double> width_exponents(const std::vector<int>& widths,
                                    const std::vector<std::vector<std::vector<double>>>& values, int steps) {
    std::vector<double> exponents;
    for (int t = 0; t < steps; ++t) {
        std::vector<double> means;
        for (const auto& by_step : values) means.push_back(block_mean(by_step[static_cast<size_t>(t)]));
        exponents.push_back(log_log_slope(widths, means));
    }
    return exponents;
}
}  // namespace

CoordCheckResult coord_check(const Config& config, const CoordCheckSettings& settings) {
    if (settings.widths.size() < 2)
        throw InputError("a coord check needs at least two widths, e.g. 64,128,256");
    if (settings.steps < 1 || settings.seeds < 1)
        throw InputError("a coord check needs steps >= 1 and seeds >= 1");
    std::vector<Config> configs;
    for (int width : settings.widths) configs.push_back(config_at_width(config, width, settings.steps));
    CoordCheckResult result;
    result.widths = settings.widths;
    result.steps = settings.steps;
    result.seeds = settings.seeds;
    result.blocks = config.model.layers;
    result.parametrization = config.model.parametrization;
    result.base_width = configs.front().model.base_width;
    const double missing = std::numeric_limits<double>::quiet_NaN();
    result.values.assign(kCoordQuantities.size(), {});
    for (size_t q = 0; q < kCoordQuantities.size(); ++q) {
        const size_t per_step = kCoordQuantities[q].per_block ? static_cast<size_t>(result.blocks) : 1;
        result.values[q].assign(
            settings.widths.size(),
            std::vector<std::vector<double>>(settings.steps, std::vector<double>(per_step, 0.0)));
    }
    for (size_t w = 0; w < configs.size(); ++w) {
        for (int seed = 0; seed < settings.seeds; ++seed) {
            Config seeded = configs[w];
            seeded.train.seed = config.train.seed + static_cast<uint64_t>(seed);
            Trainer trainer(seeded);
            for (int t = 0; t < settings.steps; ++t) {
                // a diverged run takes no more steps: what it would have measured stays NaN
                const StepRecord* record =
                    trainer.status() == RunStatus::Running ? &trainer.step().record : nullptr;
                for (size_t q = 0; q < kCoordQuantities.size(); ++q) {
                    std::vector<double>& cell = result.values[q][w][static_cast<size_t>(t)];
                    const std::vector<double> read =
                        record && !record->layers.empty() ? read_quantity(q, *record) : std::vector<double>{};
                    for (size_t b = 0; b < cell.size(); ++b)
                        cell[b] += (b < read.size() ? read[b] : missing) / settings.seeds;
                }
            }
        }
    }
    for (const auto& values : result.values)
        result.exponents.push_back(width_exponents(result.widths, values, result.steps));
    return result;
}

nlohmann::json to_json(const CoordCheckResult& result) {
    nlohmann::json quantities = nlohmann::json::object();
    const auto number = [](double v) {
        return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
    };
    for (size_t q = 0; q < kCoordQuantities.size(); ++q) {
        nlohmann::json by_width = nlohmann::json::array();
        for (const auto& steps : result.values[q]) {
            nlohmann::json by_step = nlohmann::json::array();
            for (const auto& blocks : steps) {
                nlohmann::json cell = nlohmann::json::array();
                for (double v : blocks) cell.push_back(number(v));
                by_step.push_back(kCoordQuantities[q].per_block ? cell : cell[0]);
            }
            by_width.push_back(std::move(by_step));
        }
        nlohmann::json exponents = nlohmann::json::array();
        for (double v : result.exponents[q]) exponents.push_back(number(v));
        quantities[std::string(kCoordQuantities[q].name)] = {{"meaning", kCoordQuantities[q].meaning},
                                                             {"per_block", kCoordQuantities[q].per_block},
                                                             {"values", std::move(by_width)},
                                                             {"width_exponent", std::move(exponents)}};
    }
    return {{"widths", result.widths},
            {"steps", result.steps},
            {"seeds", result.seeds},
            {"blocks", result.blocks},
            {"parametrization", to_string(result.parametrization)},
            {"base_width", result.base_width},
            {"quantities", std::move(quantities)}};
}

namespace {
// Reads one quantity's values, [width][step][block] (or [width][step]), checked against the sizes.
std::vector<std::vector<std::vector<double>>> read_values(const nlohmann::json& values,
                                                          const CoordCheckResult& r, bool per_block,
                                                          const std::string& where) {
    const auto fail = [&where](const std::string& what) { throw InputError(where + ": " + what); };
    const auto number = [&fail](const nlohmann::json& v) {
        if (v.is_null()) return std::nan("");
        if (!v.is_number()) fail("a value is " + json_excerpt(v) + ", not a number or null");
        return v.get<double>();
    };
    if (!values.is_array() || values.size() != r.widths.size()) fail("\"values\" needs one list per width");
    std::vector<std::vector<std::vector<double>>> out;
    for (const nlohmann::json& by_step : values) {
        if (!by_step.is_array() || by_step.size() != static_cast<size_t>(r.steps))
            fail("a width needs one entry per step");
        auto& steps = out.emplace_back();
        for (const nlohmann::json& cell : by_step) {
            auto& blocks = steps.emplace_back();
            if (!per_block) {
                blocks.push_back(number(cell));
                continue;
            }
            if (!cell.is_array() || cell.size() != static_cast<size_t>(r.blocks))
                fail("a step needs one value per block");
            for (const nlohmann::json& v : cell) blocks.push_back(number(v));
        }
    }
    return out;
}

int read_count(const nlohmann::json& document, const char* key, int minimum, const std::string& where) {
    const auto found = document.find(key);
    if (found == document.end() || !found->is_number_integer() || found->get<int64_t>() < minimum ||
        found->get<int64_t>() > 1000000)
        throw InputError(where + ": \"" + key + "\" is missing or not a whole number of at least " +
                         std::to_string(minimum));
    return found->get<int>();
}
}  // namespace

CoordCheckResult read_coord_check(const std::string& dir) {
    const std::string path = dir + "/" + kCoordCheckFileName;
    const nlohmann::json document = read_json_file(path, "coord check file");
    const std::string where = path;
    if (!document.is_object())
        throw InputError(where + ": not a JSON object; write it with probe --coord-check");
    CoordCheckResult result;
    const auto widths = document.find("widths");
    if (widths == document.end() || !widths->is_array() || widths->size() < 2)
        throw InputError(where + ": \"widths\" needs at least two widths");
    for (const nlohmann::json& width : *widths) {
        if (!width.is_number_integer() || width.get<int64_t>() < 1 || width.get<int64_t>() > 65536)
            throw InputError(where + ": a width is " + json_excerpt(width) +
                             ", not a whole number from 1 to 65536");
        result.widths.push_back(width.get<int>());
    }
    result.steps = read_count(document, "steps", 1, where);
    result.seeds = read_count(document, "seeds", 1, where);
    result.blocks = read_count(document, "blocks", 1, where);
    result.base_width = read_count(document, "base_width", 0, where);
    Config config;
    try {
        apply_override(config,
                       "model.parametrization=" + document.value("parametrization", std::string("?")));
    } catch (const InputError& error) {
        throw InputError(where + ": " + error.what());
    }
    result.parametrization = config.model.parametrization;
    const auto quantities = document.find("quantities");
    if (quantities == document.end() || !quantities->is_object())
        throw InputError(where + ": \"quantities\" is missing; write it with probe --coord-check");
    for (const CoordQuantity& quantity : kCoordQuantities) {
        const std::string name(quantity.name);
        const auto entry = quantities->find(name);
        if (entry == quantities->end() || !entry->is_object() || !entry->contains("values"))
            throw InputError(where + ": quantity \"" + name + "\" is missing");
        result.values.push_back(
            read_values(entry->at("values"), result, quantity.per_block, where + " (" + name + ")"));
        result.exponents.push_back(width_exponents(result.widths, result.values.back(), result.steps));
    }
    return result;
}

}  // namespace normlab
