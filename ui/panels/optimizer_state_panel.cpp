// The optimizer-state chart's series, per block of the selected run, for the quantity chosen.
#include "ui/panels/optimizer_state_panel.h"

#include <QLabel>
#include <algorithm>

#include "ui/panels/event_markers.h"
#include "ui/panels/run_captions.h"

namespace normlab::ui {

OptimizerStatePanel::OptimizerStatePanel(const TelemetryStore& store, QWidget* parent)
    : LinePanel(QStringLiteral("optimizer_state"), tr("Optimizer state per block"), store, parent) {
    m_runs = addRunSelector();
    m_quantity = new QComboBox;
    m_quantity->setObjectName(QStringLiteral("optimizer_state_quantity"));
    m_quantity->addItem(tr("update RMS, sqrt(v)"));
    m_quantity->addItem(tr("epsilon share"));
    m_quantity->setToolTip(
        tr("The last update's RMS with Adam's gradient scale sqrt(mean v); or the share of "
           "each block's coordinates whose sqrt(v) is below Adam's epsilon (Wortsman et "
           "al.'s epsilon collapse; not recorded under SGD, which keeps no v)"));
    header()->addWidget(new QLabel(tr("Show")));
    header()->addWidget(m_quantity);
    connect(m_quantity, &QComboBox::currentIndexChanged, this, &OptimizerStatePanel::refresh);
}

PlotContent OptimizerStatePanel::buildContent(int columns) const {
    PlotContent content;
    content.x = stepAxis();
    const RunHistory* run = m_runs->selectedRun();
    content.emptyText = emptyText(tr("Appears after the first logged step"), run);
    if (m_quantity->currentIndex() == 1) {
        content.y = AxisSpec{tr("share with sqrt(v) below eps"), false, 0.0, 1.0, QString()};
        if (run) addBlockSeries(content, run->adamEpsFraction, columns);
        content.markers = eventMarkers(store());
        return content;
    }
    content.y = AxisSpec{tr("update RMS"), true, std::nullopt, std::nullopt, tr("solid")};
    if (!run) return content;
    addBlockSeries(content, run->updateRms, columns);
    // Adam's sqrt(v) on its own axis, where the run recorded it (SGD keeps no v: no axis, no legend)
    const bool adam = std::any_of(run->adamGradRms.begin(), run->adamGradRms.end(),
                                  [](const DecimatedSeries& series) { return !series.empty(); });
    if (adam) {
        content.y2 = AxisSpec{tr("Adam sqrt(v)"), true, std::nullopt, std::nullopt, tr("dashed")};
        addBlockSeries(content, run->adamGradRms, columns, tr(" sqrt(v)"), Qt::DashLine, true);
    }
    content.markers = eventMarkers(store());
    return content;
}

}  // namespace normlab::ui
