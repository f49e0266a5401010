// Serialises records with the contract's key names; non-finite numbers become null (JSON has no NaN).
// A run that took no step has a null final_loss rather than a made-up 0.
#include "engine/io/records_json.h"

#include <cmath>

#include "engine/core/errors.h"
#include "engine/train/trainer.h"

namespace normlab {

namespace {
nlohmann::json number(double value) {
    return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

// The per-block fields, each with its JSON name: one table for writing and reading. `cross` fields
// belong to the cross-attention sub-layer of an encoder-decoder's decoder block (written only there).
struct LayerField {
    const char* name;
    double LayerTelemetry::*member;
    bool cross;
};
struct GradField {
    const char* name;
    double GradientNorms::*member;
    bool cross;
};
struct DependencyField {
    const char* name;
    double LayerTelemetry::*member;
    bool cross;
};
constexpr LayerField kLayerFields[] = {{"resid", &LayerTelemetry::resid, false},
                                       {"resid_attn", &LayerTelemetry::resid_attn, false},
                                       {"update_ratio", &LayerTelemetry::update_ratio, false},
                                       {"attn_entropy", &LayerTelemetry::attn_entropy, false},
                                       {"attn_max_logit", &LayerTelemetry::attn_max_logit, false},
                                       {"resid_cross", &LayerTelemetry::resid_cross, true},
                                       {"cross_attn_entropy", &LayerTelemetry::cross_attn_entropy, true},
                                       {"cross_attn_max_logit", &LayerTelemetry::cross_attn_max_logit, true}};
constexpr GradField kGradFields[] = {{"w_qkv", &GradientNorms::w_qkv, false},
                                     {"w_o", &GradientNorms::w_o, false},
                                     {"w_1", &GradientNorms::w_1, false},
                                     {"w_2", &GradientNorms::w_2, false},
                                     {"norm1", &GradientNorms::norm1, false},
                                     {"norm2", &GradientNorms::norm2, false},
                                     {"norm1_out", &GradientNorms::norm1_out, false},
                                     {"norm2_out", &GradientNorms::norm2_out, false},
                                     {"w_cross_q", &GradientNorms::w_cross_q, true},
                                     {"w_cross_kv", &GradientNorms::w_cross_kv, true},
                                     {"w_cross_o", &GradientNorms::w_cross_o, true},
                                     {"norm_cross", &GradientNorms::norm_cross, true},
                                     {"norm_cross_out", &GradientNorms::norm_cross_out, true}};
constexpr DependencyField kDependencyFields[] = {{"attn", &LayerTelemetry::dependency_attn, false},
                                                 {"ffn", &LayerTelemetry::dependency_ffn, false},
                                                 {"cross", &LayerTelemetry::dependency_cross, true}};

nlohmann::json layers_json(const std::vector<LayerTelemetry>& layers) {
    nlohmann::json out = nlohmann::json::array();
    for (const LayerTelemetry& layer : layers) {
        nlohmann::json entry, grad, dependency;
        for (const LayerField& field : kLayerFields)
            if (!field.cross || layer.has_cross) entry[field.name] = number(layer.*field.member);
        for (const GradField& field : kGradFields)
            if (!field.cross || layer.has_cross) grad[field.name] = number(layer.grad.*field.member);
        for (const DependencyField& field : kDependencyFields)
            if (!field.cross || layer.has_cross) dependency[field.name] = number(layer.*field.member);
        entry["grad"] = std::move(grad);
        entry["dependency"] = std::move(dependency);
        out.push_back(std::move(entry));
    }
    return out;
}

// A number written by number(): null is a non-finite value (NaN); a missing key (a writer that does
// not measure it) reads as 0, which log charts leave out.
double read_number(const nlohmann::json& object, const char* key) {
    if (!object.is_object()) return 0.0;
    const auto it = object.find(key);
    if (it == object.end()) return 0.0;
    if (it->is_null()) return std::nan("");
    if (!it->is_number()) throw InputError(std::string("\"") + key + "\" is not a number");
    return it->get<double>();
}

std::optional<double> read_optional(const nlohmann::json& object, const char* key) {
    if (!object.contains(key)) return std::nullopt;
    return read_number(object, key);
}

std::vector<LayerTelemetry> layers_from_json(const nlohmann::json& layers) {
    if (!layers.is_array()) throw InputError("\"layers\" is not a list");
    std::vector<LayerTelemetry> out;
    out.reserve(layers.size());
    for (const nlohmann::json& entry : layers) {
        if (!entry.is_object()) throw InputError("a block of \"layers\" is not an object");
        LayerTelemetry layer;
        layer.has_cross = entry.contains("resid_cross");
        const nlohmann::json grad = entry.value("grad", nlohmann::json::object());
        const nlohmann::json dependency = entry.value("dependency", nlohmann::json::object());
        for (const LayerField& field : kLayerFields) layer.*field.member = read_number(entry, field.name);
        for (const GradField& field : kGradFields) layer.grad.*field.member = read_number(grad, field.name);
        for (const DependencyField& field : kDependencyFields)
            layer.*field.member = read_number(dependency, field.name);
        out.push_back(layer);
    }
    return out;
}
}  // namespace

nlohmann::json to_json(const StepRecord& record) {
    nlohmann::json out;
    out["step"] = record.step;
    out["loss"] = number(record.loss);
    out["lr"] = number(record.lr);
    out["grad_norm"] = number(record.grad_norm);
    if (record.accuracy) out["accuracy"] = number(*record.accuracy);
    if (record.val_loss) out["val_loss"] = number(*record.val_loss);
    if (record.val_accuracy) out["val_accuracy"] = number(*record.val_accuracy);
    out["steps_per_s"] = number(record.steps_per_s);
    if (!record.layers.empty()) out["layers"] = layers_json(record.layers);
    if (!record.encoder_layers.empty()) out["encoder_layers"] = layers_json(record.encoder_layers);
    return out;
}

nlohmann::json to_json(const Event& event) {
    nlohmann::json out = {{"step", event.step}, {"kind", event.kind}, {"message", event.message}};
    if (!event.key.empty()) out["key"] = event.key;
    if (!event.value.empty()) out["value"] = event.value;
    if (event.kind == "diverged")
        out["block"] = event.block >= 0 ? nlohmann::json(event.block) : nlohmann::json(nullptr);
    return out;
}

std::vector<std::string> block_field_names(bool cross) {
    std::vector<std::string> names;
    for (const LayerField& field : kLayerFields)
        if (!field.cross || cross) names.emplace_back(field.name);
    for (const GradField& field : kGradFields)
        if (!field.cross || cross) names.push_back(std::string("grad.") + field.name);
    for (const DependencyField& field : kDependencyFields)
        if (!field.cross || cross) names.push_back(std::string("dependency.") + field.name);
    return names;
}

std::vector<double> block_field_values(const LayerTelemetry& layer, bool cross) {
    std::vector<double> values;
    for (const LayerField& field : kLayerFields)
        if (!field.cross || cross) values.push_back(layer.*field.member);
    for (const GradField& field : kGradFields)
        if (!field.cross || cross) values.push_back(layer.grad.*field.member);
    for (const DependencyField& field : kDependencyFields)
        if (!field.cross || cross) values.push_back(layer.*field.member);
    return values;
}

StepRecord step_record_from_json(const nlohmann::json& line) {
    if (!line.is_object()) throw InputError("a metrics line is not a JSON object");
    if (!line.contains("step") || !line["step"].is_number_integer())
        throw InputError("a metrics line has no whole-number \"step\"");
    StepRecord record;
    record.step = line["step"].get<int64_t>();
    record.loss = read_number(line, "loss");
    record.lr = read_number(line, "lr");
    record.grad_norm = read_number(line, "grad_norm");
    record.accuracy = read_optional(line, "accuracy");
    record.val_loss = read_optional(line, "val_loss");
    record.val_accuracy = read_optional(line, "val_accuracy");
    record.steps_per_s = read_number(line, "steps_per_s");
    if (line.contains("layers")) record.layers = layers_from_json(line["layers"]);
    if (line.contains("encoder_layers")) record.encoder_layers = layers_from_json(line["encoder_layers"]);
    return record;
}

Event event_from_json(const nlohmann::json& line) {
    if (!line.is_object()) throw InputError("an events line is not a JSON object");
    if (!line.contains("step") || !line["step"].is_number_integer())
        throw InputError("an events line has no whole-number \"step\"");
    Event event;
    event.step = line["step"].get<int64_t>();
    const auto text = [&line](const char* key) {
        const auto it = line.find(key);
        return it != line.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    event.kind = text("kind");
    event.message = text("message");
    event.key = text("key");
    event.value = text("value");
    const auto block = line.find("block");
    event.block = block != line.end() && block->is_number_integer() ? block->get<int>() : -1;
    return event;
}

nlohmann::json summary_json(const Trainer& trainer, double wall_seconds, int64_t first_step) {
    const bool diverged = trainer.status() == RunStatus::Diverged;
    nlohmann::json out;
    out["status"] = to_string(trainer.status());
    out["steps"] = trainer.steps_done();
    const std::optional<double> final_loss = trainer.final_loss();
    out["final_loss"] = final_loss ? number(*final_loss) : nlohmann::json(nullptr);
    out["diverged_at"] = diverged ? nlohmann::json(trainer.diverged_at()) : nlohmann::json(nullptr);
    out["first_bad_layer"] = diverged && trainer.first_bad_layer() >= 0
                                 ? nlohmann::json(trainer.first_bad_layer())
                                 : nlohmann::json(nullptr);
    out["steps_per_s"] = number(
        wall_seconds > 0.0 ? static_cast<double>(trainer.steps_done() - first_step) / wall_seconds : 0.0);
    out["final_val_loss"] =
        trainer.last_val_loss() ? number(*trainer.last_val_loss()) : nlohmann::json(nullptr);
    out["wall_seconds"] = number(wall_seconds);
    out["device"] = trainer.device_reason();
    return out;
}

}  // namespace normlab
