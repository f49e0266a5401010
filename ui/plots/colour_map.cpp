// Viridis anchors (matplotlib's map sampled at 9 points) with linear interpolation in RGB.
#include "ui/plots/colour_map.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace normlab::ui {

QColor viridis(double t) {
    static constexpr std::array<std::array<int, 3>, 9> anchors = {{{68, 1, 84},
                                                                   {71, 44, 122},
                                                                   {59, 81, 139},
                                                                   {44, 113, 142},
                                                                   {33, 144, 141},
                                                                   {39, 173, 129},
                                                                   {92, 200, 99},
                                                                   {170, 220, 50},
                                                                   {253, 231, 37}}};
    if (!std::isfinite(t)) return nonFiniteColour();
    const double position = std::clamp(t, 0.0, 1.0) * (anchors.size() - 1);
    const auto low = static_cast<size_t>(std::floor(position));
    const size_t high = std::min(low + 1, anchors.size() - 1);
    const double f = position - static_cast<double>(low);
    const auto mix = [&](int channel) {
        return static_cast<int>(std::lround(anchors[low][channel] * (1 - f) + anchors[high][channel] * f));
    };
    return {mix(0), mix(1), mix(2)};
}

QColor nonFiniteColour() {
    return {230, 30, 60};
}

}  // namespace normlab::ui
