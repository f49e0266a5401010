// Content of the branch-share chart: one run's per-block contribution shares of the sub-layer chosen.
#include "ui/panels/branch_share_panel.h"

#include <QLabel>

#include "ui/panels/event_markers.h"

namespace normlab::ui {

BranchSharePanel::BranchSharePanel(const TelemetryStore& store, QWidget* parent)
    : LinePanel(QStringLiteral("branch_share"), tr("Branch share per block"), store, parent) {
    m_runs = addRunSelector();
    m_sublayer = new QComboBox;
    m_sublayer->setObjectName(QStringLiteral("branch_share_sublayer"));
    m_sublayer->addItem(tr("attention"));
    m_sublayer->addItem(tr("FFN"));
    m_sublayer->setToolTip(
        tr("Each block's sub-layer branch as added, a F(x), against the stream x it is added to: "
           "||a F(x)|| / ||x||. Under Pre-LN the stream grows with depth, so deep blocks add a "
           "shrinking share (the PreNorm dilution); LayerNorm Scaling shrinks their branches further"));
    header()->addWidget(new QLabel(tr("of")));
    header()->addWidget(m_sublayer);
    connect(m_sublayer, &QComboBox::currentIndexChanged, this, &BranchSharePanel::refresh);
}

PlotContent BranchSharePanel::buildContent(int columns) const {
    PlotContent content;
    content.x = stepAxis();
    const bool ffn = m_sublayer->currentIndex() == 1;
    content.y = AxisSpec{ffn ? tr("FFN ||a F(x)|| / ||x||") : tr("attention ||a F(x)|| / ||x||"), true,
                         std::nullopt, std::nullopt, QString()};
    const RunHistory* run = m_runs->selectedRun();
    content.emptyText = emptyText(tr("Appears after the first logged step"), run);
    if (!run) return content;
    addBlockSeries(content, ffn ? run->contributionFfn : run->contributionAttn, columns);
    content.markers = eventMarkers(store());
    return content;
}

}  // namespace normlab::ui
