// Two quantities of one run on one chart: the first solid in the run's colour, the second dashed in a
// lighter one (the attention and output-logit charts draw every visible run this way).
#pragma once
#include <QPointF>
#include <QString>
#include <QVector>

#include "ui/history/telemetry_store.h"
#include "ui/plots/plot_content.h"

namespace normlab::ui {

struct NamedPoints {
    QString name;
    QVector<QPointF> points;
};

// Adds `solid` and `dashed` of `run` to `content` (the dashed one on the right axis when
// `dashedOnSecondary`).
void addSolidAndDashed(PlotContent& content, const TelemetryStore& store, const RunHistory& run,
                       const NamedPoints& solid, const NamedPoints& dashed, bool dashedOnSecondary);

}  // namespace normlab::ui
