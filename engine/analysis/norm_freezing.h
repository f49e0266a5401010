// The norm-free inference probe (Heimersheim 2024, "You can remove GPT2's LayerNorm by fine-tuning"):
// on a trained model, each norm's per-token scale replaced by its mean over held-out data, one norm at a
// time and all at once, with the held-out loss of each; optionally the norms frozen one by one with
// fine-tuning steps between them, against the same fine-tuning with every norm left alone.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace normlab {

class Model;
class Trainer;

// A norm's per-token standard deviation sqrt(Var + eps) over the held-out tokens: its mean (what it is
// frozen at) and coefficient of variation (how much the tokens' scales differ).
struct NormScale {
    double mean_std = 0.0;
    double cv = 0.0;
};

struct FrozenNorm {
    std::string name;  // the norm's gain name without ".weight", e.g. "blocks.0.norm1"
    NormScale scale;
    double loss = 0.0;  // held-out loss with only this norm frozen at scale.mean_std
};

// One norm frozen during fine-tuning: the held-out loss right after freezing it and after the steps.
struct FinetuneStage {
    std::string name;
    double mean_std = 0.0;  // measured on the model as fine-tuned so far
    double loss_frozen = 0.0;
    double loss_after = 0.0;
};

struct NormFreezingResult {
    int batches = 0;  // held-out batches every loss and mean is taken over
    double baseline_loss = 0.0;
    std::vector<FrozenNorm> one_at_a_time;
    // Spearman's rank correlation over the norms of the loss change and the scale's CV (NaN: < 3 norms)
    double change_cv_rank_correlation = 0.0;
    double all_at_once_loss = 0.0;  // every norm frozen at its mean_std, no fine-tuning
    // With fine-tuning (steps_per_norm > 0):
    int steps_per_norm = 0;
    std::string order;  // "forward" or "ffn-first"
    double finetune_lr = 0.0;
    std::vector<FinetuneStage> stages;
    double control_loss = 0.0;  // the same number of steps with no norm frozen
    int64_t diverged_at = -1;   // the fine-tuning step where the frozen run diverged, or -1
};

// The held-out measurements on `trainer`'s model (unchanged afterwards): baseline, each norm alone,
// all at once. Throws InputError for a model without norms that have a per-token scale (DyT, none).
NormFreezingResult freeze_norms_probe(Trainer& trainer, int batches);

// The order norms are frozen in during fine-tuning: forward order, or Heimersheim's (every FFN
// sub-layer's norm, then every attention sub-layer's, then the final norms, each group in forward order).
enum class FreezeOrder { Forward, FfnFirst };
std::string to_string(FreezeOrder order);
FreezeOrder freeze_order_from_string(const std::string& text);  // InputError naming the choices
std::vector<int> freezing_order(const Model& model, FreezeOrder order);

struct FinetunePlan {
    int steps_per_norm = 0;
    FreezeOrder order = FreezeOrder::FfnFirst;
};

// Fine-tuning: in `frozen`, freezes the norms one by one in the plan's order, each at its mean over
// the held-out batches on the model as fine-tuned so far, then trains steps_per_norm steps; `control`
// (the same model) trains as many steps with its norms untouched. Both trainers should run a constant
// learning rate. Fills result's fine-tuning fields.
void finetune_with_frozen_norms(Trainer& frozen, Trainer& control, const FinetunePlan& plan,
                                NormFreezingResult& result);

// Spearman's rank correlation of a and b (ties share their mean rank); NaN for fewer than 3 pairs.
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b);

nlohmann::json to_json(const NormFreezingResult& result);

}  // namespace normlab
