// Where to cut a growing line into a head that stays unchanged while the run goes on and a short tail
// with the newest points. Redrawing only the tail makes QtCharts recompute and repaint a small strip
// instead of the whole line; the head is redone only when the tail has grown long or the points
// before it changed (a restart, a new decimation width).
#pragma once
#include <QPointF>
#include <QVector>

namespace normlab::ui {

struct LineSplit {
    int headCount = 0;  // points [0, headCount) are the head; the tail is [headCount - 1, end)
    bool headChanged = false;
};

inline constexpr int kTailKeep = 8;  // points left in the tail when the head is redone
inline constexpr int kTailMax = 64;  // the head is redone when the tail grows past this

// `shown`: the points drawn now, of which [0, headCount) are the head; `next`: the points to draw.
LineSplit splitLine(const QVector<QPointF>& shown, int headCount, const QVector<QPointF>& next);

}  // namespace normlab::ui
