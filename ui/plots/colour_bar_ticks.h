// The labels of a heatmap's log colour bar: both ends and the whole decades between them that keep a
// label's height and some air (kLabelSpacing) from every other label, at any bar height and font size.
#pragma once
#include <QString>
#include <vector>

namespace normlab::ui {

struct ColourBarTick {
    double exponent = 0.0;  // log10 of the value labelled
    QString text;
};

// For a bar from 10^lo (bottom) to 10^hi (top) `barPixels` tall with labels `labelPixels` tall: the
// bottom end, the top end when the bar holds two labels, and decades between them, bottom to top.
std::vector<ColourBarTick> colourBarTicks(double lo, double hi, double barPixels, double labelPixels);

}  // namespace normlab::ui
