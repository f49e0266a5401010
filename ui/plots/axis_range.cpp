// Rounded, sticky axis ranges (see axis_range.h).
#include "ui/plots/axis_range.h"

#include <algorithm>
#include <cmath>

namespace normlab::ui {

namespace {
constexpr double kPad = 0.05;       // of the data span, on each free end
constexpr double kHeadroom = 0.25;  // of the data span, added where the data grew out of the range
constexpr double kMinFill = 0.4;    // a shown range is kept while the data fill at least this much
constexpr double kTicks = 6.0;      // about this many tick intervals on a linear axis
// Axes never reach further than this (a log axis over 600 decades still has bounded ticks, and spans and
// paddings of values near the largest double stay finite).
constexpr double kLargest = 1e300, kSmallestPositive = 1e-300;
// A linear range is at least this fraction of its largest magnitude wide: narrower, a tick step falls
// below the values' resolution and a tick loop that adds it would never end.
constexpr double kMinRelativeSpan = 1e-6;

double clampMagnitude(double value) {
    return std::clamp(value, -kLargest, kLargest);
}

AxisRange logRange(const AxisSpec& spec, DataRange data) {
    const bool fromData = data.set;
    if (!data.set) data = {1e-3, 1.0, true};
    double lo = std::clamp(spec.min.value_or(data.min), kSmallestPositive, kLargest);
    double hi = std::clamp(spec.max.value_or(data.max), lo, kLargest);
    // Whole decades, so that a log axis always has labelled ticks at both ends.
    if (!spec.min) lo = std::pow(10.0, std::floor(std::log10(lo) + 1e-9));
    if (!spec.max) hi = std::pow(10.0, std::ceil(std::log10(hi) - 1e-9));
    if (hi <= lo && lo < kLargest) hi = lo * 10.0;
    if (hi <= lo) lo = hi / 10.0;
    return {lo, hi, 0.0, fromData};
}

// `grewBelow` / `grewAbove`: the data left the shown range on that side (leave room to grow).
AxisRange linearRange(const AxisSpec& spec, DataRange data, bool grewBelow, bool grewAbove) {
    if (!data.set) {
        const double lo = spec.min.value_or(0.0), hi = spec.max.value_or(lo + 1.0);
        return {lo, hi, niceStep((hi - lo) / kTicks), false};
    }
    double lo = clampMagnitude(spec.min.value_or(data.min)), hi = clampMagnitude(spec.max.value_or(data.max));
    const double magnitude = std::max(std::abs(lo), std::abs(hi));
    if (hi - lo <= magnitude * kMinRelativeSpan) {
        // One value (or values closer than they can be ticked): a unit around it, or a tenth of it.
        const double half = std::max(0.5, magnitude * 0.1);
        lo -= half;
        hi += half;
    }
    const double span = hi - lo;
    double a = spec.min ? lo : lo - span * (kPad + (grewBelow ? kHeadroom : 0.0));
    double b = spec.max ? hi : hi + span * (kPad + (grewAbove ? kHeadroom : 0.0));
    // Free ends on tenths of a tick: round values, little wasted space.
    const double tick = niceStep((b - a) / kTicks), tenth = tick / 10.0;
    if (!spec.min) a = tenth * std::floor(a / tenth + 1e-9);
    if (!spec.max) b = tenth * std::ceil(b / tenth - 1e-9);
    return {a, b, tick, true, data.min, data.max};
}

double fill(const AxisRange& inner, const AxisRange& outer, bool log) {
    if (log) return std::log(inner.max / inner.min) / std::log(outer.max / outer.min);
    return (inner.max - inner.min) / (outer.max - outer.min);
}
}  // namespace

void DataRange::include(double value) {
    if (!std::isfinite(value)) return;
    min = set ? std::min(min, value) : value;
    max = set ? std::max(max, value) : value;
    set = true;
}

double niceStep(double raw) {
    if (!(raw > 0.0) || !std::isfinite(raw)) return 1.0;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double factor : {1.0, 2.0, 5.0})
        if (factor * magnitude >= raw * (1.0 - 1e-9)) return factor * magnitude;
    return 10.0 * magnitude;
}

double tickIntervalFitting(const AxisRange& range, double pixels, double labelPixels) {
    const double span = range.max - range.min;
    double tick = range.tick > 0.0 ? range.tick : niceStep(span / kTicks);
    if (!(span > 0.0) || !(pixels > 0.0)) return tick;
    const double least = labelPixels * kLabelSpacing * span / pixels;  // the interval that fits
    while (tick < least && tick < span) tick = niceStep(tick * 1.5);   // 1, 2, 5, 10, ...
    return tick;
}

double logDecades(const AxisRange& range) {
    return std::log10(range.max) - std::log10(range.min);  // max / min would overflow over 1e-300..1e300
}

double logBaseFitting(const AxisRange& range, double pixels, double labelPixels) {
    const double decades = logDecades(range);
    double step = std::max(1.0, std::ceil(decades / 7.0 - 1e-9));
    if (pixels > 0.0 && decades > 0.0)
        step = std::max(step, std::ceil(labelPixels * kLabelSpacing * decades / pixels - 1e-9));
    return std::pow(10.0, std::min(step, std::max(1.0, std::ceil(decades))));
}

AxisRange stableAxisRange(const AxisSpec& spec, DataRange data, std::optional<AxisRange> shown) {
    if (shown && !shown->fromData) shown.reset();  // a placeholder range: nothing to keep or grow from
    if (spec.log) {
        const AxisRange fresh = logRange(spec, data);
        const bool keep = shown && shown->min > 0.0 && fresh.min >= shown->min && fresh.max <= shown->max &&
                          (!spec.min || *spec.min == shown->min) && (!spec.max || *spec.max == shown->max) &&
                          fill(fresh, *shown, true) >= kMinFill;
        return keep ? *shown : fresh;
    }
    const AxisRange fresh = linearRange(spec, data, false, false);
    if (!shown) return fresh;
    const bool fixedEndsSame =
        (!spec.min || *spec.min == shown->min) && (!spec.max || *spec.max == shown->max);
    if (fixedEndsSame && shown->tick > 0.0 && fresh.min >= shown->min && fresh.max <= shown->max &&
        fill(fresh, *shown, false) >= kMinFill)
        return *shown;
    // Headroom only on a side where the data went further than when the shown range was fitted (not
    // where a wider data span merely widened the padding).
    return linearRange(spec, data, data.min<shown->dataMin, data.max> shown->dataMax);
}

}  // namespace normlab::ui
