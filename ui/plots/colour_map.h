// A perceptual colour map (viridis, interpolated between 9 anchors) for the heatmaps: uniform in
// lightness, readable in grey scale and by readers with colour-vision deficiencies.
#pragma once
#include <QColor>

namespace normlab::ui {

// t in [0, 1] (clamped) to a viridis colour.
QColor viridis(double t);
// Non-finite values (a diverged block) are drawn in this colour.
QColor nonFiniteColour();

}  // namespace normlab::ui
