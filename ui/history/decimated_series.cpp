// Min/max bucket merging and the per-pixel-column envelope used by every line plot.
#include "ui/history/decimated_series.h"

#include <algorithm>
#include <cmath>

namespace normlab::ui {

void MinMaxBucket::absorb(const MinMaxBucket& later) {
    x_last = later.x_last;
    last = later.last;
    if (later.min < min) {
        min = later.min;
        x_at_min = later.x_at_min;
    }
    if (later.max > max) {
        max = later.max;
        x_at_max = later.x_at_max;
    }
}

void DecimatedSeries::append(double x, double y) {
    if (!std::isfinite(y)) return;
    m_history.append(MinMaxBucket::of(x, y));
}

std::optional<double> DecimatedSeries::lastValue() const {
    if (empty()) return std::nullopt;
    return buckets().back().last;
}

std::optional<double> DecimatedSeries::lastX() const {
    if (empty()) return std::nullopt;
    return buckets().back().x_last;
}

namespace {
void appendColumn(QVector<QPointF>& points, const MinMaxBucket& column) {
    if (column.min == column.max) {
        points.append({column.x_last, column.last});
        return;
    }
    const bool minFirst = column.x_at_min <= column.x_at_max;
    points.append(minFirst ? QPointF(column.x_at_min, column.min) : QPointF(column.x_at_max, column.max));
    points.append(minFirst ? QPointF(column.x_at_max, column.max) : QPointF(column.x_at_min, column.min));
}
}  // namespace

QVector<QPointF> DecimatedSeries::envelope(double x0, double x1, int columns) const {
    QVector<QPointF> points;
    if (empty() || columns < 1 || !(x1 >= x0)) return points;
    const double width = std::max(x1 - x0, 1e-12) / columns;
    std::optional<MinMaxBucket> column;
    int64_t columnIndex = -1;
    for (const MinMaxBucket& bucket : buckets()) {
        if (bucket.x_last < x0 || bucket.x_first > x1) continue;
        const auto index = std::clamp<int64_t>(
            static_cast<int64_t>(std::floor((bucket.x_first - x0) / width)), 0, columns - 1);
        if (column && index == columnIndex) {
            column->absorb(bucket);
            continue;
        }
        if (column) appendColumn(points, *column);
        column = bucket;
        columnIndex = index;
    }
    if (column) appendColumn(points, *column);
    return points;
}

QVector<QPointF> DecimatedSeries::envelope(int columns) const {
    if (empty()) return {};
    return envelope(buckets().front().x_first, buckets().back().x_last, columns);
}

QVector<QPointF> DecimatedSeries::samples() const {
    QVector<QPointF> points;
    points.reserve(bucketCount());
    for (const MinMaxBucket& bucket : buckets()) points.append({bucket.x_last, bucket.last});
    return points;
}

std::optional<std::pair<double, double>> DecimatedSeries::valueRange(bool positiveOnly) const {
    std::optional<std::pair<double, double>> range;
    const auto include = [&](double value) {
        if (positiveOnly && !(value > 0.0)) return;
        if (!range) range = std::make_pair(value, value);
        range->first = std::min(range->first, value);
        range->second = std::max(range->second, value);
    };
    for (const MinMaxBucket& bucket : buckets()) {
        include(bucket.min);
        include(bucket.max);
    }
    return range;
}

}  // namespace normlab::ui
