// parse_loss_scale: the three forms of train.loss_scale, and a refusal that names them.
#include "engine/config/loss_scale_spec.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

#include "engine/core/errors.h"

namespace normlab {

namespace {
// A finite number above 0 filling all of `text`, or nothing.
std::optional<double> positive_number(std::string_view text) {
    double value = 0.0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
        value <= 0.0 || value > kMaxLossScale)
        return std::nullopt;
    return value;
}
}  // namespace

LossScaleSpec parse_loss_scale(const std::string& text) {
    if (text == "none") return {};
    if (text == "dynamic") return {LossScaleSpec::Kind::Dynamic, kDynamicInitialScale};
    constexpr std::string_view kDynamicFrom = "dynamic:";
    const bool dynamic = text.rfind(kDynamicFrom, 0) == 0;
    const std::optional<double> value =
        positive_number(std::string_view(text).substr(dynamic ? kDynamicFrom.size() : 0));
    if (!value)
        throw InputError("train.loss_scale = '" + text +
                         "' is not a loss scale; use none, dynamic (PyTorch's GradScaler rules from 65536), "
                         "dynamic:N (from N) or a fixed factor, each above 0 and at most 1e30, e.g. 1024");
    return {dynamic ? LossScaleSpec::Kind::Dynamic : LossScaleSpec::Kind::Fixed, *value};
}

}  // namespace normlab
