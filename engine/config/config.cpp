// Reading, writing, overriding and validating the run configuration. Every key goes through the
// descriptor table in config_keys.cpp, so the JSON file, --set and the errors all agree.
#include "engine/config/config.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "engine/config/config_keys.h"
#include "engine/config/loss_scale_spec.h"
#include "engine/config/tokenizer_spec.h"
#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/small_file.h"

namespace normlab {
namespace {

using nlohmann::json;

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

// A key's value against what the key table says it accepts: its range (the error says what to set)
// or its strings. Parsing already checks both; this catches configs built in code.
void check_value(const KeyDescriptor& d, const json& value) {
    if (d.range && !d.range->contains(value.get<double>())) {
        const bool integer = d.kind != ValueKind::Number;
        std::string message = d.name + " must be " + range_expectation(*d.range, integer) + ", got " +
                              (integer ? value.dump() : format_number(value.get<double>()));
        if (!d.range_advice.empty()) message += ": " + d.range_advice;
        throw InputError(message);
    }
    if (!d.choices.empty()) {
        const std::string v = value.get<std::string>();
        const bool known = std::find(d.choices.begin(), d.choices.end(), v) != d.choices.end();
        std::string accepted;
        for (const std::string& c : d.choices) accepted += (accepted.empty() ? "" : "|") + c;
        require(known, d.name + " must be one of " + accepted + ", got \"" + v + "\"");
    }
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

// RoPE turns pairs of head dimensions (docs/model.md#architecture-keys).
void check_rope(const ModelConfig& m) {
    const int head_dim = m.d_model / m.heads;
    require(m.position != Position::Rope || head_dim % 2 == 0,
            "model.position=rope turns pairs of head dimensions, but d_model / heads = " +
                std::to_string(head_dim) + " is odd; change model.d_model or model.heads so it is even");
}

// Grouped-query attention shares each key/value head among heads / kv_heads query heads.
void check_kv_heads(const ModelConfig& m) {
    if (m.kv_heads == 0 || m.heads % m.kv_heads == 0) return;
    std::string divisors;
    for (int k = 1; k <= m.heads; ++k) {
        if (m.heads % k == 0) divisors += (divisors.empty() ? "" : ", ") + std::to_string(k);
    }
    throw InputError("model.kv_heads (" + std::to_string(m.kv_heads) + ") must divide model.heads (" +
                     std::to_string(m.heads) + "); set model.kv_heads to one of " + divisors +
                     " (1: multi-query), or 0 for as many as the heads");
}

// The checks that involve more than one key.
// CompleteP scales each residual branch by base_depth / layers: defined for a plain shortcut whose sum
// no norm follows (Pre-LN, Peri-LN, no norm), which the other schemes and Post-LN are not.
void check_parametrization(const ModelConfig& m) {
    if (m.parametrization != Parametrization::CompleteP) return;
    require(m.residual == Residual::Plain,
            "model.parametrization=completep scales each residual branch by base_depth / layers, and "
            "model.residual=" +
                to_string(m.residual) +
                " sets the shortcut or branch scales itself; set model.residual=plain or "
                "model.parametrization=mup");
    require(m.encoder_layers == 0,
            "model.parametrization=completep scales the branches of one stack by base_depth / layers; an "
            "encoder-decoder has two stacks, so set model.encoder_layers=0 or model.parametrization=mup");
    require(m.norm_placement == NormPlacement::Pre || m.norm_placement == NormPlacement::Peri ||
                m.norm_placement == NormPlacement::None,
            "model.parametrization=completep is depth-muP for a residual stream no norm rescales, and "
            "model.norm_placement=" +
                to_string(m.norm_placement) +
                " normalises the sum after each branch; set model.norm_placement=pre (or peri, none) or "
                "model.parametrization=mup");
}

// The residual scheme against the placement (and stack) it is defined for.
void check_residual(const ModelConfig& m) {
    require(m.residual != Residual::Lns || m.norm_placement == NormPlacement::Pre ||
                m.norm_placement == NormPlacement::Peri || m.norm_placement == NormPlacement::Mix,
            "model.residual=lns scales the output of each block's input norm (Pre-LN's) by 1/sqrt(l), and "
            "model.norm_placement=" +
                to_string(m.norm_placement) +
                " has no input norms; set model.norm_placement=pre (or peri, mix) or another model.residual");
    require(m.residual != Residual::B2t || m.norm_placement == NormPlacement::Post ||
                m.norm_placement == NormPlacement::Mix,
            "model.residual=b2t adds each block's input to its last residual sum before Post-LN's last norm, "
            "and model.norm_placement=" +
                to_string(m.norm_placement) +
                " has no Post-LN blocks; set model.norm_placement=post (or mix) or another model.residual");
    require(m.residual != Residual::ResiDual || m.norm_placement == NormPlacement::Post,
            "model.residual=resi_dual pairs Post-LN's normalised stream with an unnormalised sum of every "
            "branch, and model.norm_placement=" +
                to_string(m.norm_placement) +
                " is not Post-LN throughout; set model.norm_placement=post or another model.residual");
    require(
        m.residual != Residual::AttnRes || m.norm_placement == NormPlacement::Pre ||
            m.norm_placement == NormPlacement::Peri || m.norm_placement == NormPlacement::None,
        "model.residual=attn_res replaces the residual sum with an average over the earlier branches, and "
        "model.norm_placement=" +
            to_string(m.norm_placement) +
            " has Post-LN blocks, whose norm acts on that sum; set model.norm_placement=pre (or peri, none) "
            "or "
            "another model.residual");
    require(m.residual != Residual::AttnRes || m.encoder_layers == 0,
            "model.residual=attn_res is built for a decoder-only stack so far; set model.encoder_layers=0 or "
            "another model.residual");
    require(m.residual_warmup_steps == 0 || m.residual != Residual::ReZero,
            "model.residual_warmup_steps scales each branch, which ReZero's alpha already gates from 0; set "
            "model.residual_warmup_steps=0 or another model.residual");
}

void check_combinations(const Config& config) {
    check_heads_divide(config.model);
    check_rope(config.model);
    check_kv_heads(config.model);
    parse_tokenizer(config.data.tokenizer);  // its form; the synthetic tasks ignore it, as data.text_path
    const LossScaleSpec loss_scale = parse_loss_scale(config.train.loss_scale);
    require(
        config.train.precision != NumberFormat::Fp8E4M3 || loss_scale.kind != LossScaleSpec::Kind::Dynamic,
        "train.loss_scale=dynamic backs off when gradients overflow to inf or NaN, and fp8_e4m3 has no "
        "infinity (what overflows saturates at 448), so the scale would never back off; with "
        "train.precision=fp8_e4m3 set train.loss_scale to a fixed factor (e.g. 1024) or none");
    check_residual(config.model);
    check_parametrization(config.model);
    if (config.train.weight_decay_mode == WeightDecayMode::Independent &&
        config.train.optimizer != OptimizerKind::AdamW)
        throw InputError(
            "train.weight_decay_mode=independent scales AdamW's decoupled decay; set "
            "train.optimizer=adamw (sgd, adam and radam add weight decay to the gradient) or "
            "train.weight_decay_mode=lr_coupled");
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
    const json document = parse_json(json_text, source_name, true);
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
    return config_from_json_text(read_small_file(path, kMaxJsonFileBytes, "config file"), path);
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
    const std::string context = "--set '" + text_excerpt(assignment) + "'";
    const size_t equals = assignment.find('=');
    const std::string key = equals == std::string::npos ? "" : trim(assignment.substr(0, equals));
    if (key.empty()) throw InputError(context + ": expected the form key=value, e.g. model.layers=12");
    const std::string text = assignment.substr(equals + 1);
    try {
        const KeyDescriptor* descriptor = find_key(key);
        if (descriptor == nullptr) throw_unknown_key(key);
        // Text that is not JSON (or nests too deeply) is taken as the string it is.
        std::optional<json> value = parse_json_or_nothing(text);
        if (!value || (descriptor->kind == ValueKind::String && !value->is_string())) value = text;
        descriptor->assign(config, *value);
    } catch (const InputError& e) {
        throw InputError(context + ": " + e.what());
    }
}

void validate(const Config& config) {
    for (const KeyDescriptor& d : key_descriptors()) check_value(d, d.read(config));
    check_combinations(config);
}

}  // namespace normlab
