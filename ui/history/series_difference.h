// The difference of two runs' series step by step (B - A), for the difference chart: only steps that
// both series hold a sample of, so every point is two measured values at the same step.
#pragma once
#include <QPointF>
#include <QVector>

#include "ui/history/decimated_series.h"

namespace normlab::ui {

// (step, b - a) at every step where both `a` and `b` keep a sample (their buckets' last samples), in
// step order. Runs stepped together (a fork and its parent) share their buckets, so every stored
// step matches; runs of different lengths match where their buckets happen to end on the same step.
QVector<QPointF> seriesDifference(const DecimatedSeries& a, const DecimatedSeries& b);

}  // namespace normlab::ui
