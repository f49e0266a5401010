// The config key table: one descriptor per struct field with the values it accepts (its range or its
// strings), plus the JSON <-> value conversions with their error messages, the enum name tables behind
// to_string(), and the unknown-key suggestion.
#include "engine/config/config_keys.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "engine/core/errors.h"
#include "engine/core/json_read.h"

namespace normlab {
namespace {

using nlohmann::json;

constexpr auto enum_names(NormPlacement) {
    using E = NormPlacement;
    return std::to_array<std::pair<E, std::string_view>>(
        {{E::Post, "post"}, {E::Pre, "pre"}, {E::Peri, "peri"}, {E::None, "none"}, {E::Mix, "mix"}});
}
constexpr auto enum_names(NormType) {
    using E = NormType;
    return std::to_array<std::pair<E, std::string_view>>({{E::LayerNorm, "layernorm"},
                                                          {E::RmsNorm, "rmsnorm"},
                                                          {E::DyT, "dyt"},
                                                          {E::BatchNorm, "batchnorm"},
                                                          {E::PowerNorm, "powernorm"}});
}
constexpr auto enum_names(QkNorm) {
    using E = QkNorm;
    return std::to_array<std::pair<E, std::string_view>>(
        {{E::None, "none"}, {E::LayerNorm, "layernorm"}, {E::RmsNorm, "rmsnorm"}});
}
constexpr auto enum_names(Residual) {
    using E = Residual;
    return std::to_array<std::pair<E, std::string_view>>({{E::Plain, "plain"},
                                                          {E::DeepNorm, "deepnorm"},
                                                          {E::ReZero, "rezero"},
                                                          {E::Admin, "admin"},
                                                          {E::Lns, "lns"},
                                                          {E::B2t, "b2t"},
                                                          {E::ResiDual, "resi_dual"},
                                                          {E::DenseFormer, "denseformer"},
                                                          {E::AttnRes, "attn_res"}});
}
constexpr auto enum_names(Activation) {
    using E = Activation;
    return std::to_array<std::pair<E, std::string_view>>(
        {{E::Relu, "relu"}, {E::Gelu, "gelu"}, {E::GeluTanh, "gelu_tanh"}});
}
// The architecture keys' enums (docs/model.md#architecture-keys).
template <class E>
using NameOf = std::pair<E, std::string_view>;
constexpr auto enum_names(FeedForward) {
    return std::to_array<NameOf<FeedForward>>(
        {{FeedForward::Mlp, "mlp"}, {FeedForward::SwiGlu, "swiglu"}, {FeedForward::GeGlu, "geglu"}});
}
constexpr auto enum_names(Position) {
    return std::to_array<NameOf<Position>>(
        {{Position::Learned, "learned"}, {Position::Rope, "rope"}, {Position::None, "none"}});
}
constexpr auto enum_names(InitScheme) {
    using E = InitScheme;
    return std::to_array<std::pair<E, std::string_view>>(
        {{E::XavierNormal, "xavier_normal"}, {E::XavierUniform, "xavier_uniform"}, {E::Gpt2, "gpt2"}});
}
constexpr auto enum_names(Parametrization) {
    return std::to_array<NameOf<Parametrization>>({{Parametrization::Sp, "sp"},
                                                   {Parametrization::Mup, "mup"},
                                                   {Parametrization::CompleteP, "completep"}});
}
constexpr auto enum_names(AdminInit) {
    using E = AdminInit;
    return std::to_array<std::pair<E, std::string_view>>({{E::Closed, "closed"}, {E::Profiled, "profiled"}});
}
constexpr auto enum_names(OptimizerKind) {
    using E = OptimizerKind;
    return std::to_array<std::pair<E, std::string_view>>(
        {{E::Sgd, "sgd"}, {E::Adam, "adam"}, {E::AdamW, "adamw"}, {E::RAdam, "radam"}});
}
constexpr auto enum_names(ScheduleKind) {
    using E = ScheduleKind;
    return std::to_array<std::pair<E, std::string_view>>({{E::Constant, "constant"},
                                                          {E::Linear, "linear"},
                                                          {E::InverseSqrt, "inverse_sqrt"},
                                                          {E::Cosine, "cosine"},
                                                          {E::Noam, "noam"}});
}
constexpr auto enum_names(WeightDecayMode) {
    using E = WeightDecayMode;
    return std::to_array<std::pair<E, std::string_view>>(
        {{E::LrCoupled, "lr_coupled"}, {E::Independent, "independent"}});
}

constexpr auto enum_names(TaskKind) {
    using E = TaskKind;
    return std::to_array<std::pair<E, std::string_view>>({{E::Text, "text"},
                                                          {E::Copy, "copy"},
                                                          {E::Reverse, "reverse"},
                                                          {E::Sort, "sort"},
                                                          {E::ModAdd, "modadd"}});
}

// Number formats: the names of engine/core/number_formats.h's table.
constexpr auto enum_names(NumberFormat) {
    std::array<NameOf<NumberFormat>, std::size(kNumberFormats)> names{};
    for (size_t i = 0; i < names.size(); ++i) names[i] = {kNumberFormats[i].format, kNumberFormats[i].name};
    return names;
}

template <class E>
std::string enum_to_string(E value) {
    for (const auto& [v, name] : enum_names(E{})) {
        if (v == value) return std::string(name);
    }
    throw std::logic_error("enum value " + std::to_string(static_cast<int>(value)) + " has no config name");
}

template <class E>
std::vector<std::string> enum_choices() {
    std::vector<std::string> out;
    for (const auto& entry : enum_names(E{})) out.emplace_back(entry.second);
    return out;
}

template <class E>
E enum_from_string(const std::string& text) {
    for (const auto& [v, name] : enum_names(E{})) {
        if (name == text) return v;
    }
    throw std::logic_error("'" + text + "' passed the choice check but names no enum value");
}

// The value as the user wrote it, for error messages: JSON text, shortened when long.
std::string describe(const json& value) {
    if (value.is_number_float()) return format_number(value.get<double>());
    return json_excerpt(value, 60);
}

[[noreturn]] void throw_type_error(const std::string& key, const std::string& expected, const json& value) {
    throw InputError("config key '" + key + "' expects " + expected + ", got " + describe(value));
}

// An integral double (1e3, 12.0) is accepted wherever an integer is.
bool is_integral_float(const json& value) {
    if (!value.is_number_float()) return false;
    const double d = value.get<double>();
    return std::isfinite(d) && d == std::floor(d);
}

int to_int(const std::string& key, const json& value) {
    constexpr int64_t kMin = std::numeric_limits<int>::min();
    constexpr int64_t kMax = std::numeric_limits<int>::max();
    const std::string expected = "an integer";
    const std::string range = "an integer between " + std::to_string(kMin) + " and " + std::to_string(kMax);
    if (value.is_number_unsigned()) {
        const uint64_t u = value.get<uint64_t>();
        if (u > static_cast<uint64_t>(kMax)) throw_type_error(key, range, value);
        return static_cast<int>(u);
    }
    if (value.is_number_integer()) {
        const int64_t i = value.get<int64_t>();
        if (i < kMin || i > kMax) throw_type_error(key, range, value);
        return static_cast<int>(i);
    }
    if (is_integral_float(value)) {
        const double d = value.get<double>();
        if (d < static_cast<double>(kMin) || d > static_cast<double>(kMax))
            throw_type_error(key, range, value);
        return static_cast<int>(d);
    }
    throw_type_error(key, expected, value);
}

uint64_t to_unsigned(const std::string& key, const json& value) {
    const std::string expected = "a non-negative integer";
    if (value.is_number_unsigned()) return value.get<uint64_t>();
    if (is_integral_float(value)) {
        const double d = value.get<double>();
        constexpr double kTwoTo64 = 18446744073709551616.0;
        if (d >= 0.0 && d < kTwoTo64) return static_cast<uint64_t>(d);
        throw_type_error(key, expected + " below 2^64", value);
    }
    throw_type_error(key, expected, value);
}

double to_number(const std::string& key, const json& value) {
    if (!value.is_number()) throw_type_error(key, "a number", value);
    const double d = value.get<double>();
    if (!std::isfinite(d)) throw_type_error(key, "a finite number", value);
    return d;
}

bool to_bool(const std::string& key, const json& value) {
    if (!value.is_boolean()) throw_type_error(key, "true or false", value);
    return value.get<bool>();
}

std::string lowercase(std::string_view text) {
    std::string out(text);
    for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            diagonal = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
        }
    }
    return row[b.size()];
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
    return out;
}

// The choice closest to `text` by edit distance (case-insensitive), or empty when none is close.
std::string closest_choice(const std::string& text, const std::vector<std::string>& choices) {
    const std::string wanted = lowercase(text);
    std::string best;
    size_t best_distance = std::max<size_t>(2, wanted.size() / 3) + 1;
    for (const std::string& choice : choices) {
        const size_t distance = edit_distance(wanted, choice);
        if (distance < best_distance) {
            best_distance = distance;
            best = choice;
        }
    }
    return best;
}

std::string to_choice(const std::string& key, const std::vector<std::string>& choices, const json& value) {
    const std::string expected = choices.empty() ? "a string" : "one of " + join(choices, "|");
    if (!value.is_string()) throw_type_error(key, expected, value);
    std::string text = value.get<std::string>();
    if (!choices.empty() && std::find(choices.begin(), choices.end(), text) == choices.end()) {
        const std::string suggestion = closest_choice(text, choices);
        throw InputError("config key '" + key + "' expects " + expected + ", got " + describe(value) +
                         (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)"));
    }
    return text;
}

template <class T>
T from_json_value(const std::string& key, const std::vector<std::string>& choices, const json& value) {
    if constexpr (std::is_same_v<T, int>) {
        return to_int(key, value);
    } else if constexpr (std::is_same_v<T, uint64_t>) {
        return to_unsigned(key, value);
    } else if constexpr (std::is_same_v<T, double>) {
        return to_number(key, value);
    } else if constexpr (std::is_same_v<T, bool>) {
        return to_bool(key, value);
    } else if constexpr (std::is_same_v<T, std::string>) {
        return to_choice(key, choices, value);
    } else {
        static_assert(std::is_enum_v<T>, "config fields are int, uint64_t, double, bool, string or enum");
        return enum_from_string<T>(to_choice(key, choices, value));
    }
}

template <class T>
constexpr ValueKind kind_of() {
    if constexpr (std::is_same_v<T, int>) return ValueKind::Integer;
    if constexpr (std::is_same_v<T, uint64_t>) return ValueKind::Unsigned;
    if constexpr (std::is_same_v<T, double>) return ValueKind::Number;
    if constexpr (std::is_same_v<T, bool>) return ValueKind::Boolean;
    return ValueKind::String;
}

// What a key accepts beyond its type: its range (required for Integer and Number keys), advice for a
// value out of range, or the strings a string key takes (an enum's come from its names).
struct KeyLimits {
    std::optional<KeyRange> range = std::nullopt;
    std::string advice = {};
    std::vector<std::string> choices = {};
};

constexpr double kNoLimit = std::numeric_limits<double>::infinity();
// Integers from lo to hi, both included; without hi, as large as the type holds.
constexpr KeyRange integers(double lo, double hi = kNoLimit) {
    return {lo, true, hi, true};
}
constexpr KeyRange kNonNegative{0.0, true, kNoLimit, false};
constexpr KeyRange kPositive{0.0, false, kNoLimit, false};
constexpr KeyRange kUnitHalfOpen{0.0, true, 1.0, false};  // [0, 1)
constexpr KeyRange kUnitClosed{0.0, true, 1.0, true};     // [0, 1]
constexpr KeyRange kUnitPositive{0.0, false, 1.0, true};  // (0, 1]
constexpr double kMaxWidth = 65536;                       // sizes that feed allocations
constexpr double kMaxDepth = 10000;
constexpr double kMaxVocab = 262144;  // Llama 3's 128256 and Gemma's 256000 fit

// `access` is a generic lambda returning a reference to the field for both Config& and const Config&.
template <class Access>
KeyDescriptor make_key(std::string name, Access access, KeyLimits limits = {}) {
    using T = std::remove_cvref_t<decltype(access(std::declval<Config&>()))>;
    if constexpr (std::is_enum_v<T>) limits.choices = enum_choices<T>();
    if constexpr (std::is_same_v<T, uint64_t>) {
        if (!limits.range) limits.range = integers(0);
    }
    if constexpr (std::is_same_v<T, int> || std::is_same_v<T, double>) {
        if (!limits.range) throw std::logic_error("config key " + name + " has no range in the key table");
    }
    const std::vector<std::string> choices = limits.choices;
    KeyDescriptor d{name, kind_of<T>(), choices, limits.range, limits.advice, nullptr, nullptr};
    d.assign = [access, name, choices](Config& config, const json& value) {
        access(config) = from_json_value<T>(name, choices, value);
    };
    d.read = [access](const Config& config) {
        if constexpr (std::is_enum_v<T>) {
            return json(enum_to_string(access(config)));
        } else {
            return json(access(config));
        }
    };
    return d;
}

// train.loss_scale takes a number as well as its words (1024 or "1024"), kept as the text parse_loss_scale
// reads; whether the text is a loss scale is checked with the other keys' values (check_combinations).
KeyDescriptor loss_scale_key() {
    const std::string name = "train.loss_scale";
    KeyDescriptor d{name, ValueKind::String, {}, std::nullopt, "", nullptr, nullptr};
    d.assign = [name](Config& config, const json& value) {
        if (value.is_number()) {
            config.train.loss_scale = format_number(to_number(name, value));
        } else {
            config.train.loss_scale = to_choice(name, {}, value);
        }
    };
    d.read = [](const Config& config) { return json(config.train.loss_scale); };
    return d;
}

// The key is spelled from the field name itself, so the two cannot drift apart.
#define NORMLAB_KEY(section, field, ...) \
    make_key(                            \
        #section "." #field, [](auto& c) -> auto& { return c.section.field; } __VA_OPT__(, ) __VA_ARGS__)

std::vector<KeyDescriptor> build_descriptors() {
    return {
        NORMLAB_KEY(model, d_model, {integers(1, kMaxWidth)}),
        NORMLAB_KEY(model, layers, {integers(1, kMaxDepth)}),
        NORMLAB_KEY(model, encoder_layers,
                    {integers(0, kMaxDepth),
                     "set it to 0 for the decoder-only model, or to the number of encoder blocks (e.g. 6)"}),
        NORMLAB_KEY(model, heads, {integers(1, kMaxWidth)}),
        NORMLAB_KEY(model, d_ff, {integers(1, kMaxWidth)}),
        NORMLAB_KEY(model, seq_len, {integers(1, kMaxWidth)}),
        NORMLAB_KEY(model, norm_placement),
        NORMLAB_KEY(model, norm_type),
        NORMLAB_KEY(model, residual),
        NORMLAB_KEY(model, activation),
        NORMLAB_KEY(model, init),
        NORMLAB_KEY(model, theory_mode),
        NORMLAB_KEY(model, deepnorm_alpha, {kNonNegative}),
        NORMLAB_KEY(model, deepnorm_beta, {kNonNegative}),
        NORMLAB_KEY(model, admin_init),
        NORMLAB_KEY(model, norm_eps, {kPositive}),
        NORMLAB_KEY(model, embedding_std, {kNonNegative}),
        NORMLAB_KEY(model, dyt_alpha, {kPositive}),
        NORMLAB_KEY(model, bn_momentum, {kUnitPositive}),
        NORMLAB_KEY(model, qk_norm),
        NORMLAB_KEY(model, mix_post_fraction, {kUnitClosed}),
        NORMLAB_KEY(model, norm_gain_warmup_steps, {integers(0)}),
        NORMLAB_KEY(model, norm_gain_warmup_start, {kUnitPositive}),
        NORMLAB_KEY(model, residual_warmup_steps, {integers(0)}),
        NORMLAB_KEY(model, denseformer_dilation,
                    {integers(1, kMaxDepth),
                     "set it to 1 for every earlier block's output, or to k for every k-th (e.g. 4)"}),
        NORMLAB_KEY(model, bias),
        NORMLAB_KEY(model, tie_embeddings),
        NORMLAB_KEY(model, ffn),
        NORMLAB_KEY(model, position),
        NORMLAB_KEY(model, rope_theta,
                    {KeyRange{1.0, false, kNoLimit, false},
                     "set it above 1, e.g. 10000 (Llama 2) or 500000 (Llama 3)"}),
        NORMLAB_KEY(
            model, kv_heads,
            {integers(0, kMaxWidth),
             "set it to 0 for as many as model.heads, or to a divisor of model.heads (1: multi-query)"}),
        NORMLAB_KEY(model, vocab_size,
                    {integers(0, kMaxVocab),
                     "set it to 0 for the data's vocabulary, or to at least the data's (a Hugging Face "
                     "config's vocab_size)"}),
        NORMLAB_KEY(model, parametrization),
        NORMLAB_KEY(
            model, base_width,
            {integers(0, kMaxWidth),
             "set it to 0 for model.d_model, or to the width the learning rate was tuned at (e.g. 64)"}),
        NORMLAB_KEY(
            model, base_depth,
            {integers(0, kMaxDepth),
             "set it to 0 for model.layers, or to the depth the learning rate was tuned at (e.g. 2)"}),
        NORMLAB_KEY(train, optimizer),
        NORMLAB_KEY(train, lr, {kNonNegative}),
        NORMLAB_KEY(train, warmup_steps, {integers(0)}),
        NORMLAB_KEY(train, schedule),
        NORMLAB_KEY(train, clip_grad_norm, {kNonNegative}),
        NORMLAB_KEY(train, batch_size, {integers(1, kMaxWidth)}),
        NORMLAB_KEY(train, steps, {integers(0)}),
        NORMLAB_KEY(train, seed),
        NORMLAB_KEY(train, beta1, {kUnitHalfOpen}),
        NORMLAB_KEY(train, beta2, {kUnitHalfOpen}),
        NORMLAB_KEY(train, eps, {kPositive}),
        NORMLAB_KEY(train, weight_decay, {kNonNegative}),
        NORMLAB_KEY(train, weight_decay_mode),
        NORMLAB_KEY(train, z_loss, {kNonNegative}),
        NORMLAB_KEY(train, precision),
        loss_scale_key(),
        NORMLAB_KEY(train, momentum, {kUnitHalfOpen}),
        NORMLAB_KEY(train, min_lr_ratio, {kUnitClosed}),
        NORMLAB_KEY(train, diverge_loss, {kNonNegative}),
        NORMLAB_KEY(train, checkpoint_every, {integers(0)}),
        NORMLAB_KEY(train, checkpoint_keep, {integers(0)}),
        NORMLAB_KEY(data, task),
        NORMLAB_KEY(data, text_path),
        NORMLAB_KEY(data, tokenizer),
        NORMLAB_KEY(data, val_fraction, {KeyRange{0.0, false, 0.5, true}}),
        NORMLAB_KEY(data, symbols, {integers(2, 65536)}),
        NORMLAB_KEY(data, modulus, {integers(2, 4096)}),
        NORMLAB_KEY(telemetry, every, {integers(1)}),
        NORMLAB_KEY(telemetry, val_every, {integers(0)}),
        NORMLAB_KEY(telemetry, val_batches, {integers(1)}),
        NORMLAB_KEY(telemetry, spike_window, {integers(5)}),
        NORMLAB_KEY(telemetry, spike_z, {kPositive}),
        make_key("device", [](auto& c) -> auto& { return c.device; }, {.choices = {"auto", "cpu", "cuda"}}),
        make_key("threads", [](auto& c) -> auto& { return c.threads; },
                 {integers(0, kMaxThreads), "set it to 0 for every core, or to a thread count"}),
    };
}

#undef NORMLAB_KEY

std::string_view last_component(std::string_view name) {
    const size_t dot = name.rfind('.');
    return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

// The closest key by edit distance (case-insensitive), or one whose field name matches exactly
// ("lr" -> "train.lr"); empty when nothing is close.
std::string suggest_key(std::string_view name) {
    const std::string wanted = lowercase(name);
    std::string best;
    size_t best_distance = std::max<size_t>(2, wanted.size() / 3) + 1;
    for (const KeyDescriptor& d : key_descriptors()) {
        size_t distance = last_component(wanted) == last_component(d.name) ? 1 : best_distance;
        // The length difference bounds the edit distance from below: a long name skips the O(n m) table.
        const size_t gap = std::max(wanted.size(), d.name.size()) - std::min(wanted.size(), d.name.size());
        if (gap < distance) distance = std::min(distance, edit_distance(wanted, d.name));
        if (distance < best_distance) {
            best_distance = distance;
            best = d.name;
        }
    }
    return best;
}

}  // namespace

const std::vector<KeyDescriptor>& key_descriptors() {
    static const std::vector<KeyDescriptor> descriptors = build_descriptors();
    return descriptors;
}

const KeyDescriptor* find_key(std::string_view name) {
    for (const KeyDescriptor& d : key_descriptors()) {
        if (d.name == name) return &d;
    }
    return nullptr;
}

bool is_section(std::string_view name) {
    for (const KeyDescriptor& d : key_descriptors()) {
        const size_t dot = d.name.find('.');
        if (dot != std::string::npos && std::string_view(d.name).substr(0, dot) == name) return true;
    }
    return false;
}

void throw_unknown_key(std::string_view name) {
    std::string message = "unknown config key '" + std::string(name) + "'";
    const std::string suggestion = suggest_key(name);
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    message += "; run `normlab-cli train --help` for the list of keys";
    throw InputError(message);
}

std::vector<std::string> config_keys() {
    std::vector<std::string> keys;
    for (const KeyDescriptor& d : key_descriptors()) keys.push_back(d.name);
    return keys;
}

std::vector<std::string> config_key_choices(std::string_view key) {
    const KeyDescriptor* descriptor = find_key(key);
    if (!descriptor) throw_unknown_key(key);
    return descriptor->choices;
}

std::optional<KeyRange> config_key_range(std::string_view key) {
    const KeyDescriptor* descriptor = find_key(key);
    if (!descriptor) throw_unknown_key(key);
    return descriptor->range;
}

std::string to_string(NormPlacement v) {
    return enum_to_string(v);
}
std::string to_string(NormType v) {
    return enum_to_string(v);
}
std::string to_string(QkNorm v) {
    return enum_to_string(v);
}
std::string to_string(Residual v) {
    return enum_to_string(v);
}
std::string to_string(Activation v) {
    return enum_to_string(v);
}
std::string to_string(FeedForward v) {
    return enum_to_string(v);
}
std::string to_string(Position v) {
    return enum_to_string(v);
}
std::string to_string(InitScheme v) {
    return enum_to_string(v);
}
std::string to_string(Parametrization v) {
    return enum_to_string(v);
}
std::string to_string(AdminInit v) {
    return enum_to_string(v);
}
std::string to_string(OptimizerKind v) {
    return enum_to_string(v);
}
std::string to_string(ScheduleKind v) {
    return enum_to_string(v);
}
std::string to_string(WeightDecayMode v) {
    return enum_to_string(v);
}
std::string to_string(TaskKind v) {
    return enum_to_string(v);
}
std::string to_string(NumberFormat v) {
    return enum_to_string(v);
}

}  // namespace normlab
