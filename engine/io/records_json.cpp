// Serialises records with the contract's key names; non-finite numbers become null (JSON has no NaN),
// and a value its writer never recorded (record_fields::kNotRecorded) is left out.
// A run that took no step has a null final_loss rather than a made-up 0.
#include "engine/io/records_json.h"

#include <cmath>

#include "engine/core/errors.h"
#include "engine/io/record_fields.h"
#include "engine/train/trainer.h"

namespace normlab {

using namespace record_fields;

namespace {
nlohmann::json number(double value) {
    return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

nlohmann::json layers_json(const std::vector<LayerTelemetry>& layers) {
    nlohmann::json out = nlohmann::json::array();
    for (const LayerTelemetry& layer : layers) {
        // An object even when nothing of the block was recorded: a block's place in the list is its index.
        nlohmann::json entry = nlohmann::json::object(), grad;
        auto put = [&layer](nlohmann::json& into, const char* name, bool cross, double value) {
            if ((!cross || layer.has_cross) && recorded(value)) into[name] = number(value);
        };
        for (const LayerField& field : kLayerFields) put(entry, field.name, field.cross, layer.*field.member);
        for (const GradField& field : kGradFields)
            put(grad, field.name, field.cross, layer.grad.*field.member);
        if (!grad.is_null()) entry["grad"] = std::move(grad);
        for (const SublayerGroup& group : kSublayerGroups) {
            nlohmann::json values;
            for (const SublayerField& field : group.fields)
                put(values, field.name, field.cross, layer.*field.member);
            if (!values.is_null()) entry[group.name] = std::move(values);
        }
        out.push_back(std::move(entry));
    }
    return out;
}

}  // namespace

nlohmann::json to_json(const StepRecord& record) {
    nlohmann::json out;
    out["step"] = record.step;
    out["loss"] = number(record.loss);
    out["lr"] = number(record.lr);
    if (recorded(record.grad_norm)) out["grad_norm"] = number(record.grad_norm);
    if (record.accuracy) out["accuracy"] = number(*record.accuracy);
    if (record.val_loss) out["val_loss"] = number(*record.val_loss);
    if (record.val_accuracy) out["val_accuracy"] = number(*record.val_accuracy);
    if (record.val_loss_batch_stats) out["val_loss_batch_stats"] = number(*record.val_loss_batch_stats);
    if (recorded(record.steps_per_s)) out["steps_per_s"] = number(record.steps_per_s);
    if (record.telemetry) {
        for (const StepField& field : kStepFields)
            if (recorded((*record.telemetry).*field.member))
                out[field.name] = number((*record.telemetry).*field.member);
    }
    if (!record.layers.empty()) out["layers"] = layers_json(record.layers);
    if (!record.layers.empty() &&
        !record.attn_head_max_logit.empty()) {  // per block: its heads' largest logits
        const size_t heads = record.attn_head_max_logit.size() / record.layers.size();
        for (size_t b = 0; b < record.layers.size(); ++b) {
            nlohmann::json per_head = nlohmann::json::array();
            for (size_t h = 0; h < heads; ++h)
                per_head.push_back(number(record.attn_head_max_logit[b * heads + h]));
            out["layers"][b]["attn_head_max_logit"] = std::move(per_head);
        }
    }
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
    for (const SublayerGroup& group : kSublayerGroups)
        for (const SublayerField& field : group.fields)
            if (!field.cross || cross) names.push_back(std::string(group.name) + "." + field.name);
    return names;
}

std::vector<double> block_field_values(const LayerTelemetry& layer, bool cross) {
    std::vector<double> values;
    for (const LayerField& field : kLayerFields)
        if (!field.cross || cross) values.push_back(layer.*field.member);
    for (const GradField& field : kGradFields)
        if (!field.cross || cross) values.push_back(layer.grad.*field.member);
    for (const SublayerGroup& group : kSublayerGroups)
        for (const SublayerField& field : group.fields)
            if (!field.cross || cross) values.push_back(layer.*field.member);
    return values;
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
    // Another writer (the PyTorch bridge's w.event(value=0.5)) may give a number: kept as its JSON text.
    if (const auto value = line.find("value"); value != line.end() && value->is_number())
        event.value = value->dump();
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
