// Content of the per-head attention-logit chart: one series per head of the chosen block, coloured by
// head index, on a log axis; steps without attention statistics leave no points.
#include "ui/panels/attention_head_panel.h"

#include <algorithm>

#include "ui/panels/event_markers.h"
#include "ui/plots/colour_map.h"

namespace normlab::ui {

AttentionHeadPanel::AttentionHeadPanel(const TelemetryStore& store, QWidget* parent)
    : LinePanel(QStringLiteral("attention_heads"), tr("Largest attention logit per head"), store, parent) {
    m_runs = addRunSelector();
    m_block = addHeaderMenu(tr("Block"), QStringLiteral("headBlock"), tr("Which block's heads to show"));
    connect(m_block, &QComboBox::activated, this, [this](int index) {
        m_wantedBlock = index;
        refresh();
    });
}

void AttentionHeadPanel::setBlock(int block) {
    m_wantedBlock = std::max(-1, block);
    refresh();
}

int AttentionHeadPanel::shownBlock(const RunHistory& run) const {
    const int blocks = static_cast<int>(run.blockMaxLogit.size());
    if (m_wantedBlock >= 0) return std::min(m_wantedBlock, blocks - 1);
    int largest = 0;
    for (int b = 1; b < blocks; ++b) {
        const auto value = run.blockMaxLogit[b].lastValue(), best = run.blockMaxLogit[largest].lastValue();
        if (value && (!best || *value > *best)) largest = b;
    }
    return largest;
}

void AttentionHeadPanel::syncBlockChoices() {
    const RunHistory* run = m_runs->selectedRun();
    const int blocks = run ? static_cast<int>(run->blockMaxLogit.size()) : 0;
    const QSignalBlocker quiet(m_block);
    if (m_block->count() != blocks) {
        m_block->clear();
        for (int b = 0; b < blocks; ++b) m_block->addItem(QString::number(b), b);
    }
    m_block->setCurrentIndex(blocks > 0 ? shownBlock(*run) : -1);
}

void AttentionHeadPanel::refresh() {
    syncBlockChoices();
    LinePanel::refresh();
}

PlotContent AttentionHeadPanel::buildContent(int columns) const {
    PlotContent content;
    content.x = stepAxis();
    content.y = AxisSpec{tr("largest logit"), true, std::nullopt, std::nullopt, QString()};
    const RunHistory* run = m_runs->selectedRun();
    content.emptyText = emptyText(tr("Appears after the first step with attention statistics"), run);
    if (!run || run->headsPerBlock <= 0 || run->blockMaxLogit.empty()) return content;
    const int block = shownBlock(*run);
    const int heads = run->headsPerBlock;
    for (int h = 0; h < heads; ++h) {
        const double hue = heads > 1 ? 0.9 * h / (heads - 1) : 0.0;
        PlotSeries series{tr("block %1 head %2").arg(block).arg(h), viridis(hue),
                          pointsOf(run->headMaxLogit[static_cast<size_t>(block * heads + h)], columns), 1.4};
        series.inLegend = heads <= 8 || h == 0 || h == heads - 1;
        content.series.push_back(series);
    }
    content.markers = eventMarkers(store());
    return content;
}

}  // namespace normlab::ui
