// The gradient-norm chart's series: three norms of each visible run.
#include "ui/panels/gradient_norm_panel.h"

#include <QLabel>
#include <algorithm>

#include "ui/panels/event_markers.h"
#include "ui/panels/run_captions.h"

namespace normlab::ui {

GradientNormPanel::GradientNormPanel(const TelemetryStore& store, QWidget* parent)
    : LinePanel(QStringLiteral("grad_norms"), tr("Gradient norms"), store, parent) {}

PlotContent GradientNormPanel::buildContent(int columns) const {
    PlotContent content;
    content.x = stepAxis();
    content.y =
        AxisSpec{tr("||grad||"), true, std::nullopt, std::nullopt, QString()};  // the legend names them
    content.emptyText = tr("Appears after the first step");
    const std::vector<std::pair<const DecimatedSeries RunHistory::*, Qt::PenStyle>> quantities = {
        {&RunHistory::gradNorm, Qt::SolidLine},
        {&RunHistory::gradEmbedding, Qt::DashLine},
        {&RunHistory::gradHead, Qt::DotLine}};
    const QStringList names = {tr("model"), tr("embeddings"), tr("head")};
    for (const auto& [id, run] : store().runs()) {
        if (!run.visible) continue;
        for (size_t q = 0; q < quantities.size(); ++q) {
            PlotSeries series = runSeries(store(), run, names[static_cast<int>(q)], q == 0,
                                          pointsOf(run.*quantities[q].first, columns));
            series.style = quantities[q].second;
            content.series.push_back(series);
        }
    }
    content.markers = eventMarkers(store());
    return content;
}

}  // namespace normlab::ui
