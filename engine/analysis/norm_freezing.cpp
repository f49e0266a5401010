// Implements the norm-free inference probe: mean per-token scales over the held-out batches (the
// validation split's first batches, as Trainer::evaluate takes them), held-out losses with norms
// frozen, and the one-by-one freezing with fine-tuning between.
#include "engine/analysis/norm_freezing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/train/trainer.h"

namespace normlab {

namespace {
// Each scaled norm's mean per-token standard deviation over the held-out batches, and its coefficient of
// variation over those tokens.
std::vector<NormScale> held_out_norm_scales(Trainer& trainer, int batches) {
    Model& model = trainer.model();
    const Config& config = trainer.config();
    std::vector<Model::NormStdSums> totals(model.scaled_norms().size());
    Batch batch;
    for (int i = 0; i < batches; ++i) {
        trainer.task().make_batch(Split::Validation, static_cast<uint64_t>(i), config.train.batch_size,
                                  config.model.seq_len, batch);
        model.forward_backward(batch, {.backward = false});
        const std::vector<Model::NormStdSums> sums = model.norm_std_sums();
        for (size_t k = 0; k < totals.size(); ++k) {
            totals[k].sum += sums[k].sum;
            totals[k].squares += sums[k].squares;
            totals[k].tokens += sums[k].tokens;
        }
    }
    std::vector<NormScale> scales;
    for (const Model::NormStdSums& total : totals) {
        const double tokens = static_cast<double>(std::max<size_t>(total.tokens, 1));
        const double mean = total.sum / tokens;
        const double variance = std::max(0.0, total.squares / tokens - mean * mean);
        scales.push_back({mean, mean > 0.0 ? std::sqrt(variance) / mean : 0.0});
    }
    return scales;
}

// Ranks (1-based, ties averaged) of values.
std::vector<double> ranks(const std::vector<double>& values) {
    std::vector<size_t> order(values.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
    std::vector<double> rank(values.size());
    for (size_t i = 0; i < order.size();) {
        size_t j = i;
        while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
        for (size_t k = i; k <= j; ++k) rank[order[k]] = 0.5 * static_cast<double>(i + j) + 1.0;
        i = j + 1;
    }
    return rank;
}

}  // namespace

double rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size() || a.size() < 3) return std::nan("");
    const std::vector<double> x = ranks(a), y = ranks(b);
    const double mean = (static_cast<double>(a.size()) + 1.0) / 2.0;
    double xy = 0.0, xx = 0.0, yy = 0.0;
    for (size_t i = 0; i < x.size(); ++i) {
        xy += (x[i] - mean) * (y[i] - mean);
        xx += (x[i] - mean) * (x[i] - mean);
        yy += (y[i] - mean) * (y[i] - mean);
    }
    return xx > 0.0 && yy > 0.0 ? xy / std::sqrt(xx * yy) : std::nan("");
}

std::string to_string(FreezeOrder order) {
    return order == FreezeOrder::Forward ? "forward" : "ffn-first";
}

FreezeOrder freeze_order_from_string(const std::string& text) {
    for (FreezeOrder order : {FreezeOrder::FfnFirst, FreezeOrder::Forward})
        if (to_string(order) == text) return order;
    throw InputError("unknown freezing order '" + text + "'; choose ffn-first or forward");
}

std::vector<int> freezing_order(const Model& model, FreezeOrder order) {
    std::vector<int> norms = model.scaled_norms();
    if (order == FreezeOrder::FfnFirst) {
        auto rank = [&](int entry) {  // the FFN sub-layers' norms, then attention's, then the final norms
            const int sublayer = model.scaled_norm_sublayer(entry);
            return sublayer == kFeedForwardSublayer ? 0 : sublayer < 0 ? 2 : 1;
        };
        std::stable_sort(norms.begin(), norms.end(), [&](int a, int b) { return rank(a) < rank(b); });
    }
    return norms;
}

namespace {
std::string norm_name(const Model& model, int entry) {
    std::string name = model.layout().entries[entry].name;
    const std::string suffix = ".weight";
    if (name.size() > suffix.size() && name.ends_with(suffix)) name.resize(name.size() - suffix.size());
    return name;
}

void unfreeze_all(Model& model) {
    for (int entry : model.scaled_norms()) model.freeze_norm(entry, 0.0);
}

// Trains `steps` steps; false when the run diverged.
bool train_steps(Trainer& trainer, int steps) {
    for (int i = 0; i < steps; ++i) {
        if (trainer.steps_done() >= trainer.config().train.steps)
            throw std::logic_error("fine-tuning needs train.steps beyond the checkpoint's step");
        trainer.step();
        if (trainer.status() == RunStatus::Diverged) return false;
    }
    return true;
}
}  // namespace

NormFreezingResult freeze_norms_probe(Trainer& trainer, int batches) {
    Model& model = trainer.model();
    const std::vector<int> norms = model.scaled_norms();
    if (norms.empty()) {
        throw InputError(
            "the model has no norm with a per-token scale to freeze (model.norm_placement=none, or "
            "model.norm_type dyt, batchnorm or powernorm); the probe needs LayerNorm or RMSNorm");
    }
    NormFreezingResult result;
    result.batches = batches;
    unfreeze_all(model);
    result.baseline_loss = trainer.evaluate(Split::Validation, batches);
    const std::vector<NormScale> scales = held_out_norm_scales(trainer, batches);
    std::vector<double> changes, variations;
    for (size_t k = 0; k < norms.size(); ++k) {
        model.freeze_norm(norms[k], scales[k].mean_std);
        const double loss = trainer.evaluate(Split::Validation, batches);
        result.one_at_a_time.push_back({norm_name(model, norms[k]), scales[k], loss});
        model.freeze_norm(norms[k], 0.0);
        changes.push_back(loss - result.baseline_loss);
        variations.push_back(scales[k].cv);
    }
    result.change_cv_rank_correlation = rank_correlation(changes, variations);
    for (size_t k = 0; k < norms.size(); ++k) model.freeze_norm(norms[k], scales[k].mean_std);
    result.all_at_once_loss = trainer.evaluate(Split::Validation, batches);
    unfreeze_all(model);
    return result;
}

void finetune_with_frozen_norms(Trainer& frozen, Trainer& control, const FinetunePlan& plan,
                                NormFreezingResult& result) {
    Model& model = frozen.model();
    const std::vector<int> all = model.scaled_norms();
    const std::vector<int> order = freezing_order(model, plan.order);
    result.steps_per_norm = plan.steps_per_norm;
    result.order = to_string(plan.order);
    result.finetune_lr = frozen.current_lr();
    result.stages.clear();
    for (int entry : order) {
        const std::vector<NormScale> scales = held_out_norm_scales(frozen, result.batches);
        const NormScale scale =
            scales[static_cast<size_t>(std::find(all.begin(), all.end(), entry) - all.begin())];
        model.freeze_norm(entry, scale.mean_std);
        FinetuneStage stage{norm_name(model, entry), scale.mean_std,
                            frozen.evaluate(Split::Validation, result.batches), 0.0};
        const bool trained = train_steps(frozen, plan.steps_per_norm);
        stage.loss_after = trained ? frozen.evaluate(Split::Validation, result.batches) : std::nan("");
        result.stages.push_back(stage);
        if (!trained) {
            result.diverged_at = frozen.diverged_at();
            break;
        }
    }
    train_steps(control, plan.steps_per_norm * static_cast<int>(order.size()));
    result.control_loss = control.evaluate(Split::Validation, result.batches);
}

namespace {
// A loss that may be NaN (a diverged fine-tuning) as JSON: null then.
nlohmann::json loss_json(double loss) {
    return std::isfinite(loss) ? nlohmann::json(loss) : nlohmann::json(nullptr);
}
}  // namespace

nlohmann::json to_json(const NormFreezingResult& result) {
    nlohmann::json norms = nlohmann::json::array();
    for (const FrozenNorm& norm : result.one_at_a_time) {
        norms.push_back({{"name", norm.name},
                         {"mean_std", norm.scale.mean_std},
                         {"cv_std", norm.scale.cv},
                         {"loss", loss_json(norm.loss)},
                         {"loss_change", loss_json(norm.loss - result.baseline_loss)}});
    }
    nlohmann::json document = {
        {"batches", result.batches},
        {"baseline_loss", result.baseline_loss},
        {"norms", norms},
        {"loss_change_cv_rank_correlation", loss_json(result.change_cv_rank_correlation)},
        {"all_at_once",
         {{"loss", loss_json(result.all_at_once_loss)},
          {"loss_change", loss_json(result.all_at_once_loss - result.baseline_loss)}}}};
    if (result.steps_per_norm <= 0) return document;
    nlohmann::json stages = nlohmann::json::array();
    for (const FinetuneStage& stage : result.stages) {
        stages.push_back({{"name", stage.name},
                          {"mean_std", stage.mean_std},
                          {"loss_frozen", loss_json(stage.loss_frozen)},
                          {"loss_after", loss_json(stage.loss_after)}});
    }
    const double final_loss = result.stages.empty() ? result.baseline_loss : result.stages.back().loss_after;
    document["finetune"] = {{"steps_per_norm", result.steps_per_norm},
                            {"order", result.order},
                            {"lr", result.finetune_lr},
                            {"stages", stages},
                            {"final_loss", loss_json(final_loss)},
                            {"control_loss", loss_json(result.control_loss)},
                            {"loss_change_vs_control", loss_json(final_loss - result.control_loss)},
                            {"loss_change_vs_baseline", loss_json(final_loss - result.baseline_loss)},
                            {"diverged_at", result.diverged_at >= 0 ? nlohmann::json(result.diverged_at)
                                                                    : nlohmann::json(nullptr)}};
    return document;
}

}  // namespace normlab
