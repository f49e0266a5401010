// Reading, writing, overriding and validating the run configuration. Every key goes through the
// descriptor table in config_keys.cpp, so the JSON file, --set and the errors all agree.
#include "engine/config/config.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "engine/config/config_keys.h"
#include "engine/core/errors.h"

namespace normlab {
namespace {

using nlohmann::json;

// "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." -> "syntax error ...",
// "[json.exception.out_of_range.406] number overflow parsing '1e999'" -> the same text without the tag.
std::string parse_error_detail(const json::exception& e) {
    std::string what = e.what();
    const size_t tag_end = what.find("] ");
    if (tag_end != std::string::npos) what = what.substr(tag_end + 2);
    const size_t colon = what.find(": ");
    if (what.starts_with("parse error") && colon != std::string::npos) what = what.substr(colon + 2);
    return what;
}

std::string parse_error_position(const std::string& text, size_t byte) {
    const size_t end = std::min(byte == 0 ? 0 : byte - 1, text.size());
    size_t line = 1;
    size_t column = 1;
    for (size_t i = 0; i < end; ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column) + " (byte " +
           std::to_string(byte) + ")";
}

// Assigns every member of `object`; sections recurse one level. An unknown top-level object is also
// walked so that {"modle": {"d_model": 1}} is reported as 'modle.d_model' with its suggestion.
void assign_object(Config& config, const json& object, const std::string& prefix) {
    for (const auto& [name, value] : object.items()) {
        const std::string key = prefix.empty() ? name : prefix + "." + name;
        if (const KeyDescriptor* descriptor = find_key(key)) {
            descriptor->assign(config, value);
        } else if (prefix.empty() && is_section(key)) {
            if (!value.is_object()) {
                throw InputError("config key '" + key + "' is a section and must be a JSON object, e.g. {\"" +
                                 key + "\": {...}}, got " + value.type_name());
            }
            assign_object(config, value, key);
        } else if (prefix.empty() && value.is_object() && !value.empty()) {
            assign_object(config, value, key);
        } else {
            throw_unknown_key(key);
        }
    }
}

std::string trim(const std::string& text) {
    const size_t begin = text.find_first_not_of(" \t");
    if (begin == std::string::npos) return "";
    const size_t end = text.find_last_not_of(" \t");
    return text.substr(begin, end - begin + 1);
}

void require(bool ok, const std::string& message) {
    if (!ok) throw InputError(message);
}

// A count that must be at least 1 and at most `max` (sizes that feed allocations).
void check_size(const std::string& key, int value, int max) {
    require(value > 0, key + " must be a positive integer, got " + std::to_string(value));
    require(value <= max, key + " must be at most " + std::to_string(max) + ", got " + std::to_string(value));
}

void check_int(const std::string& key, int value, int lo, int hi = std::numeric_limits<int>::max()) {
    const std::string expected =
        hi == std::numeric_limits<int>::max()
            ? "an integer >= " + std::to_string(lo)
            : "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    require(value >= lo && value <= hi, key + " must be " + expected + ", got " + std::to_string(value));
}

// An interval of finite numbers; an infinite `hi` means no upper bound.
struct Range {
    double lo;
    bool lo_inclusive;
    double hi;
    bool hi_inclusive;
};

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr Range kNonNegative{0.0, true, kInfinity, false};
constexpr Range kPositive{0.0, false, kInfinity, false};
constexpr Range kUnitHalfOpen{0.0, true, 1.0, false};
constexpr Range kUnitClosed{0.0, true, 1.0, true};
constexpr Range kUnitPositive{0.0, false, 1.0, true};

void check_number(const std::string& key, double value, const Range& range) {
    const bool above_lo = range.lo_inclusive ? value >= range.lo : value > range.lo;
    const bool below_hi = std::isinf(range.hi) || (range.hi_inclusive ? value <= range.hi : value < range.hi);
    if (std::isfinite(value) && above_lo && below_hi) return;
    std::string expected;
    if (std::isinf(range.hi)) {
        expected = (range.lo_inclusive ? ">= " : "> ") + format_number(range.lo);
    } else {
        expected = std::string("in ") + (range.lo_inclusive ? "[" : "(") + format_number(range.lo) + ", " +
                   format_number(range.hi) + (range.hi_inclusive ? "]" : ")");
    }
    throw InputError(key + " must be a finite number " + expected + ", got " + format_number(value));
}

// Largest divisor of n that is <= k (k >= 1), and smallest divisor of n that is >= k (0 if none).
int divisor_at_most(int n, int k) {
    for (int d = std::min(k, n); d > 1; --d) {
        if (n % d == 0) return d;
    }
    return 1;
}

int divisor_at_least(int n, int k) {
    for (int d = k; d <= n; ++d) {
        if (n % d == 0) return d;
    }
    return 0;
}

void check_heads_divide(const ModelConfig& m) {
    if (m.d_model % m.heads == 0) return;
    const int lower = m.d_model - m.d_model % m.heads;
    const int upper = lower + m.heads;
    std::string message = "model.d_model (" + std::to_string(m.d_model) +
                          ") must be divisible by model.heads (" + std::to_string(m.heads) +
                          "); try d_model ";
    message += lower > 0 ? std::to_string(lower) + " or " + std::to_string(upper) : std::to_string(upper);
    const int fewer = divisor_at_most(m.d_model, m.heads);
    const int more = divisor_at_least(m.d_model, m.heads);
    message += ", or heads " + std::to_string(fewer) + (more > 0 ? " or " + std::to_string(more) : "");
    throw InputError(message);
}

void validate_model(const ModelConfig& m) {
    constexpr int kMaxWidth = 65536;
    check_size("model.d_model", m.d_model, kMaxWidth);
    check_size("model.layers", m.layers, 10000);
    require(m.encoder_layers >= 0 && m.encoder_layers <= 10000,
            "model.encoder_layers must be an integer in [0, 10000], got " + std::to_string(m.encoder_layers) +
                ": set it to 0 for the decoder-only model, or to the number of encoder blocks (e.g. 6)");
    check_size("model.heads", m.heads, kMaxWidth);
    check_size("model.d_ff", m.d_ff, kMaxWidth);
    check_size("model.seq_len", m.seq_len, kMaxWidth);
    check_heads_divide(m);
    check_number("model.deepnorm_alpha", m.deepnorm_alpha, kNonNegative);
    check_number("model.deepnorm_beta", m.deepnorm_beta, kNonNegative);
    check_number("model.norm_eps", m.norm_eps, kPositive);
    check_number("model.embedding_std", m.embedding_std, kNonNegative);
    check_number("model.dyt_alpha", m.dyt_alpha, kPositive);
    check_number("model.mix_post_fraction", m.mix_post_fraction, kUnitClosed);
    check_int("model.norm_gain_warmup_steps", m.norm_gain_warmup_steps, 0);
    check_number("model.norm_gain_warmup_start", m.norm_gain_warmup_start, kUnitPositive);
    check_int("model.residual_warmup_steps", m.residual_warmup_steps, 0);
    require(m.residual_warmup_steps == 0 || m.residual != Residual::ReZero,
            "model.residual_warmup_steps scales each branch, which ReZero's alpha already gates from 0; set "
            "model.residual_warmup_steps=0 or another model.residual");
}

void validate_train(const TrainConfig& t) {
    check_number("train.lr", t.lr, kNonNegative);
    check_int("train.warmup_steps", t.warmup_steps, 0);
    check_number("train.clip_grad_norm", t.clip_grad_norm, kNonNegative);
    check_size("train.batch_size", t.batch_size, 65536);
    check_int("train.steps", t.steps, 0);
    check_number("train.beta1", t.beta1, kUnitHalfOpen);
    check_number("train.beta2", t.beta2, kUnitHalfOpen);
    check_number("train.eps", t.eps, kPositive);
    check_number("train.weight_decay", t.weight_decay, kNonNegative);
    if (t.weight_decay_mode == WeightDecayMode::Independent && t.optimizer != OptimizerKind::AdamW)
        throw InputError(
            "train.weight_decay_mode=independent scales AdamW's decoupled decay; set "
            "train.optimizer=adamw (sgd, adam and radam add weight decay to the gradient) or "
            "train.weight_decay_mode=lr_coupled");
    check_number("train.z_loss", t.z_loss, kNonNegative);
    check_number("train.momentum", t.momentum, kUnitHalfOpen);
    check_number("train.min_lr_ratio", t.min_lr_ratio, kUnitClosed);
    check_number("train.diverge_loss", t.diverge_loss, kNonNegative);
    check_int("train.checkpoint_every", t.checkpoint_every, 0);
}

void validate_data(const DataConfig& d) {
    check_number("data.val_fraction", d.val_fraction, Range{0.0, false, 0.5, true});
    check_int("data.symbols", d.symbols, 2, 65536);
    check_int("data.modulus", d.modulus, 2, 4096);
}

void validate_telemetry(const TelemetryConfig& t) {
    check_int("telemetry.every", t.every, 1);
    check_int("telemetry.val_every", t.val_every, 0);
    check_int("telemetry.val_batches", t.val_batches, 1);
    check_int("telemetry.spike_window", t.spike_window, 5);
    check_number("telemetry.spike_z", t.spike_z, kPositive);
}

// What the table itself guarantees on parse, re-checked for configs built in code: finite numbers
// and strings from their accepted set.
void validate_types(const Config& config) {
    for (const KeyDescriptor& d : key_descriptors()) {
        const json value = d.read(config);
        if (d.kind == ValueKind::Number) {
            const double v = value.get<double>();
            require(std::isfinite(v), d.name + " must be a finite number, got " + format_number(v));
        }
        if (!d.choices.empty()) {
            const std::string v = value.get<std::string>();
            const bool known = std::find(d.choices.begin(), d.choices.end(), v) != d.choices.end();
            std::string accepted;
            for (const std::string& c : d.choices) accepted += (accepted.empty() ? "" : "|") + c;
            require(known, d.name + " must be one of " + accepted + ", got \"" + v + "\"");
        }
    }
}

}  // namespace

std::string wiring_note(const ModelConfig& model) {
    const bool shortcut_scheme = model.residual == Residual::DeepNorm || model.residual == Residual::Admin;
    if (!shortcut_scheme || model.norm_placement == NormPlacement::Post) return "";
    const std::string name = model.residual == Residual::DeepNorm ? "DeepNorm" : "Admin";
    return "model.residual=" + to_string(model.residual) +
           " with model.norm_placement=" + to_string(model.norm_placement) + ": " + name +
           " is a Post-LN scheme (docs/science.md); here its shortcut scale is applied to the " +
           to_string(model.norm_placement) +
           " wiring as an experiment. Set model.norm_placement=post for the published scheme.";
}

Config config_from_json_text(const std::string& json_text, const std::string& source_name) {
    json document;
    try {
        document = json::parse(json_text, nullptr, true, true);
    } catch (const json::parse_error& e) {
        throw InputError(source_name + ": invalid JSON at " + parse_error_position(json_text, e.byte) + ": " +
                         parse_error_detail(e) + "; fix the JSON syntax");
    } catch (const json::exception& e) {
        throw InputError(source_name + ": invalid JSON: " + parse_error_detail(e) + "; fix the JSON syntax");
    }
    if (!document.is_object()) {
        throw InputError(source_name +
                         ": a config must be a JSON object such as {\"model\": {\"d_model\": 64}}, got " +
                         std::string(document.type_name()));
    }
    Config config;
    try {
        assign_object(config, document, "");
    } catch (const InputError& e) {
        throw InputError(source_name + ": " + e.what());
    }
    return config;
}

Config config_from_file(const std::string& path) {
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    if (!std::filesystem::exists(status)) {
        throw InputError("cannot read config file '" + path + "': it does not exist; check the path");
    }
    if (std::filesystem::is_directory(status)) {
        throw InputError("cannot read config file '" + path +
                         "': it is a directory; give the path of a JSON file");
    }
    if (!std::filesystem::is_regular_file(status)) {
        throw InputError(
            "cannot read config file '" + path +
            "': it is not a regular file (a device, pipe or socket); give the path of a JSON file");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError("cannot read config file '" + path + "': " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw InputError("cannot read config file '" + path + "': read failed");
    return config_from_json_text(text.str(), path);
}

json config_to_json(const Config& config) {
    json out = json::object();
    for (const KeyDescriptor& d : key_descriptors()) {
        const size_t dot = d.name.find('.');
        if (dot == std::string::npos) {
            out[d.name] = d.read(config);
        } else {
            out[d.name.substr(0, dot)][d.name.substr(dot + 1)] = d.read(config);
        }
    }
    return out;
}

std::string config_to_json_text(const Config& config) {
    return config_to_json(config).dump(2, ' ', false, json::error_handler_t::replace);
}

void apply_override(Config& config, const std::string& assignment) {
    const std::string context = "--set '" + assignment + "'";
    const size_t equals = assignment.find('=');
    const std::string key = equals == std::string::npos ? "" : trim(assignment.substr(0, equals));
    if (key.empty()) throw InputError(context + ": expected the form key=value, e.g. model.layers=12");
    const std::string text = assignment.substr(equals + 1);
    try {
        const KeyDescriptor* descriptor = find_key(key);
        if (descriptor == nullptr) throw_unknown_key(key);
        json value = json::parse(text, nullptr, false);
        if (value.is_discarded() || (descriptor->kind == ValueKind::String && !value.is_string()))
            value = text;
        descriptor->assign(config, value);
    } catch (const InputError& e) {
        throw InputError(context + ": " + e.what());
    }
}

void validate(const Config& config) {
    validate_model(config.model);
    validate_train(config.train);
    validate_data(config.data);
    validate_telemetry(config.telemetry);
    require(config.threads >= 0 && config.threads <= kMaxThreads,
            "threads must be an integer in [0, " + std::to_string(kMaxThreads) + "] (0: every core), got " +
                std::to_string(config.threads));
    validate_types(config);
}

}  // namespace normlab
