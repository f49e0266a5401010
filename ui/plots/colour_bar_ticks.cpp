// Colour-bar labels that never overlap (colour_bar_ticks.h).
#include "ui/plots/colour_bar_ticks.h"

#include <cmath>

#include "ui/plots/axis_range.h"

namespace normlab::ui {

std::vector<ColourBarTick> colourBarTicks(double lo, double hi, double barPixels, double labelPixels) {
    const auto endText = [](double exponent) { return QString::number(std::pow(10.0, exponent), 'g', 2); };
    std::vector<ColourBarTick> ticks{{lo, endText(lo)}};
    if (!(hi > lo) || barPixels < 2.0 * labelPixels) return ticks;
    const double pixelsPerDecade = barPixels / (hi - lo);
    const double gap = labelPixels * kLabelSpacing;  // a label's height and some air (as on line charts)
    // Decades a label's height apart, on multiples of that spacing, clear of both ends.
    const double every = std::max(1.0, std::ceil(gap / pixelsPerDecade - 1e-9));
    for (double e = every * std::ceil(lo / every); e <= hi; e += every)
        if ((e - ticks.back().exponent) * pixelsPerDecade >= gap && (hi - e) * pixelsPerDecade >= gap)
            ticks.push_back({e, QStringLiteral("1e%1").arg(e, 0, 'f', 0)});
    ticks.push_back({hi, endText(hi)});
    return ticks;
}

}  // namespace normlab::ui
