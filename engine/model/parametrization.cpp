// The multipliers of model.parametrization, each from width_ratio and branch_multiplier alone.
#include "engine/model/parametrization.h"

#include <cmath>

namespace normlab {

namespace {
bool width_rules(const ModelConfig& model) {
    return model.parametrization != Parametrization::Sp;
}
int base_width(const ModelConfig& model) {
    return model.base_width > 0 ? model.base_width : model.d_model;
}
}  // namespace

double width_ratio(const ModelConfig& model) {
    return width_rules(model) ? static_cast<double>(model.d_model) / base_width(model) : 1.0;
}

double branch_multiplier(const ModelConfig& model) {
    if (model.parametrization != Parametrization::CompleteP || model.base_depth <= 0) return 1.0;
    return static_cast<double>(model.base_depth) / model.layers;
}

double output_multiplier(const ModelConfig& model) {
    return 1.0 / width_ratio(model);
}

float attention_logit_scale(const ModelConfig& model) {
    const double head_dim = static_cast<double>(model.d_model) / model.heads;
    return static_cast<float>(1.0 / std::sqrt(head_dim) / std::sqrt(width_ratio(model)));
}

double hidden_init_gain(const ModelConfig& model) {
    return model.init == InitScheme::Gpt2 ? 1.0 / std::sqrt(width_ratio(model)) : 1.0;
}

int embedding_init_width(const ModelConfig& model) {
    return width_rules(model) ? base_width(model) : model.d_model;
}

WidthClass width_class(const ParamLayout& layout, int entry) {
    const ParamEntry& e = layout.entries.at(static_cast<size_t>(entry));
    switch (e.role) {
        case ParamRole::Matrix:
            return entry == layout.head ? WidthClass::VectorLike : WidthClass::Hidden;
        case ParamRole::NormAlpha:
        case ParamRole::ReZeroAlpha:
        case ParamRole::AdminOmega:   // one per sub-layer
        case ParamRole::DenseWeight:  // one per block average and output
            return WidthClass::Fixed;
        default:
            return WidthClass::VectorLike;
    }
}

OptimizerMultipliers optimizer_multipliers(const ModelConfig& model, OptimizerKind optimizer,
                                           const ParamLayout& layout, int entry) {
    const double m = width_ratio(model);
    const WidthClass width = width_class(layout, entry);
    if (optimizer == OptimizerKind::Sgd)
        return width == WidthClass::VectorLike ? OptimizerMultipliers{m, 1.0 / m} : OptimizerMultipliers{};
    return width == WidthClass::Hidden ? OptimizerMultipliers{1.0 / m, m} : OptimizerMultipliers{};
}

}  // namespace normlab
