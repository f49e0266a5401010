// What train.loss_scale names (docs/precision.md): "none", "dynamic" (PyTorch's GradScaler rules, the
// constants below), "dynamic:N" (the same from the scale N, GradScaler's init_scale) or a fixed factor
// such as "1024", by which the loss's gradient is multiplied before backward and the parameters'
// gradients divided before the update.
#pragma once
#include <string>

namespace normlab {

struct LossScaleSpec {
    enum class Kind { None, Fixed, Dynamic };
    Kind kind = Kind::None;
    double value = 1.0;  // Fixed: the factor; Dynamic: the starting scale
};

// torch.amp.GradScaler's defaults (torch 2.x): the starting scale 2^16, doubled after 2000 steps in a row
// with finite gradients, halved (and the step skipped) on a step whose gradients overflowed.
inline constexpr double kDynamicInitialScale = 65536.0;
inline constexpr double kDynamicGrowthFactor = 2.0;
inline constexpr double kDynamicBackoffFactor = 0.5;
inline constexpr int kDynamicGrowthInterval = 2000;
// The largest scale a setting may ask for: far above any useful one, far below float32's largest.
inline constexpr double kMaxLossScale = 1e30;

// Parses train.loss_scale; throws InputError naming the key and the forms for anything else (an empty
// text, "0", "-8", "inf", "auto", "dynamic:0").
LossScaleSpec parse_loss_scale(const std::string& text);

}  // namespace normlab
