// Axis ranges that change rarely: a linear range is padded and ends on tenths of a tick, with headroom on
// the side the data grew towards, a log range ends on whole decades, and a range already shown is kept while
// the data stay inside it and fill a fair part of it. Each change makes QtCharts relayout the axis and
// recompute every series on it.
#pragma once
#include <optional>

#include "ui/plots/plot_content.h"

namespace normlab::ui {

// Min and max of the finite values seen.
struct DataRange {
    double min = 0.0, max = 0.0;
    bool set = false;
    void include(double value);
};

struct AxisRange {
    double min = 0.0, max = 1.0;
    double tick = 0.0;                    // linear axes: the interval between labelled ticks (anchored at 0)
    bool fromData = false;                // false: a placeholder for an axis without data
    double dataMin = 0.0, dataMax = 0.0;  // the data it was fitted to
    bool operator==(const AxisRange&) const = default;
};

// The smallest of 1, 2, 5 x 10^k that is at least `raw`.
double niceStep(double raw);

// Labelled ticks a label's height (or width, on a horizontal axis) apart, with a gap: QtCharts drops a
// label that would overlap the one before (a loss axis read 1, 3, 4). The linear interval: the range's
// own, or the next 1-2-5 step that leaves `labelPixels` x kLabelSpacing between labels on `pixels`.
// The log base: 10^k with k the whole decades that do (and at most ~7 labels).
constexpr double kLabelSpacing = 1.3;
double logDecades(const AxisRange& range);  // of a log range
double tickIntervalFitting(const AxisRange& range, double pixels, double labelPixels);
double logBaseFitting(const AxisRange& range, double pixels, double labelPixels);

// The range to show `data` on an axis described by `spec` (fixed ends win), keeping `shown` (the
// range on screen now) when it still fits. Log axes ignore values <= 0.
AxisRange stableAxisRange(const AxisSpec& spec, DataRange data, std::optional<AxisRange> shown);

}  // namespace normlab::ui
