// Serialises records with the contract's key names; non-finite numbers become null (JSON has no NaN).
// A run that took no step has a null final_loss rather than a made-up 0.
#include "engine/io/records_json.h"

#include <cmath>

#include "engine/train/trainer.h"

namespace normlab {

namespace {
nlohmann::json number(double value) {
    return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}
nlohmann::json layers_json(const std::vector<LayerTelemetry>& layers) {
    nlohmann::json out = nlohmann::json::array();
    for (const LayerTelemetry& layer : layers) {
        const GradientNorms& g = layer.grad;
        nlohmann::json entry = {
            {"resid", number(layer.resid)},
            {"resid_attn", number(layer.resid_attn)},
            {"grad",
             {{"w_qkv", number(g.w_qkv)},
              {"w_o", number(g.w_o)},
              {"w_1", number(g.w_1)},
              {"w_2", number(g.w_2)},
              {"norm1", number(g.norm1)},
              {"norm2", number(g.norm2)},
              {"norm1_out", number(g.norm1_out)},
              {"norm2_out", number(g.norm2_out)}}},
            {"update_ratio", number(layer.update_ratio)},
            {"attn_entropy", number(layer.attn_entropy)},
            {"attn_max_logit", number(layer.attn_max_logit)},
            {"dependency", {{"attn", number(layer.dependency_attn)}, {"ffn", number(layer.dependency_ffn)}}}};
        if (layer.has_cross) {
            // additive: the cross-attention sub-layer of an encoder-decoder model's decoder block
            entry["resid_cross"] = number(layer.resid_cross);
            entry["cross_attn_entropy"] = number(layer.cross_attn_entropy);
            entry["cross_attn_max_logit"] = number(layer.cross_attn_max_logit);
            entry["dependency"]["cross"] = number(layer.dependency_cross);
            nlohmann::json& grad = entry["grad"];
            grad["w_cross_q"] = number(g.w_cross_q);
            grad["w_cross_kv"] = number(g.w_cross_kv);
            grad["w_cross_o"] = number(g.w_cross_o);
            grad["norm_cross"] = number(g.norm_cross);
            grad["norm_cross_out"] = number(g.norm_cross_out);
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
