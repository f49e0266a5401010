// How a chart is drawn apart from its data: the font scale (1 on screen, larger in presentation mode,
// on the stage and for figures at a chosen font size; line widths follow) and whether its background is
// opaque. LinePlot and HeatmapView take it, so on-screen charts and exported figures share one set of sizes.
#pragma once
#include <algorithm>

namespace normlab::ui {

struct ChartStyle {
    static constexpr double kPresentationScale = 1.65;
    // The base font size (axis labels) at a scale of 1, in points: a figure's font size divides by it.
    static constexpr double kBasePointSize = 8.5;

    // A chart that fills the screen (the stage, a maximised chart) scales with its size: its shorter
    // side over kStageSide, up to kLargestScale. Two stage charts side by side at 1920x1080 get about
    // 2.2, tick labels of about 19 pt (25 px at 96 dpi).
    static constexpr double kStageSide = 420.0;
    static constexpr double kLargestScale = 3.5;
    static double scaleForSize(int width, int height) {
        return std::clamp(std::min(width, height) / kStageSide, 1.0, kLargestScale);
    }

    double fontScale = 1.0;
    bool opaque = true;

    double points(double atScaleOne) const { return atScaleOne * fontScale; }
    // Line widths grow with the fonts, never below the screen's.
    double lineScale() const { return fontScale < 1.0 ? 1.0 : fontScale; }
    bool operator==(const ChartStyle&) const = default;
};

}  // namespace normlab::ui
