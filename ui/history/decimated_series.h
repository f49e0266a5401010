// One scalar time series (loss, lr, a block's update ratio, ...) kept bounded for 100k+ steps:
// buckets hold the first/last step and the min and max with where they occurred, so drawing one
// point pair per pixel column keeps every single-step spike visible.
#pragma once
#include <QPointF>
#include <QVector>
#include <optional>

#include "ui/history/bucket_history.h"

namespace normlab::ui {

struct MinMaxBucket {
    double x_first = 0.0, x_last = 0.0;
    double min = 0.0, x_at_min = 0.0;
    double max = 0.0, x_at_max = 0.0;
    double last = 0.0;

    static MinMaxBucket of(double x, double y) { return {x, x, y, x, y, x, y}; }
    void absorb(const MinMaxBucket& later);
};

class DecimatedSeries {
  public:
    explicit DecimatedSeries(int capacity = 4096) : m_history(capacity) {}

    // Non-finite values are not stored (a diverged step is shown by its event marker instead).
    void append(double x, double y);
    void clear() { m_history.clear(); }
    bool empty() const { return m_history.empty(); }
    int bucketCount() const { return static_cast<int>(m_history.buckets().size()); }
    std::optional<double> lastValue() const;
    std::optional<double> lastX() const;

    // Points to draw over [x0, x1] with at most `columns` columns: per column its min and max, in
    // the order they occurred. Without a range, the whole series.
    QVector<QPointF> envelope(double x0, double x1, int columns) const;
    QVector<QPointF> envelope(int columns) const;
    // Every stored bucket as (x of last sample, last value): the data behind CSV export.
    QVector<QPointF> samples() const;
    // Min and max over stored values (for axis ranges); positiveOnly skips values <= 0 (log axes).
    std::optional<std::pair<double, double>> valueRange(bool positiveOnly) const;

    const std::vector<MinMaxBucket>& buckets() const { return m_history.buckets(); }

  private:
    BucketHistory<MinMaxBucket> m_history;
};

}  // namespace normlab::ui
