// Content of the norm-scale chart: per block, the chosen family's two norms (solid and dashed, coloured
// by depth) on a log axis, plus the stack's final norm as one thicker line in the run's colour.
#include "ui/panels/norm_scale_panel.h"

#include "ui/panels/event_markers.h"

namespace normlab::ui {

NormScalePanel::NormScalePanel(const TelemetryStore& store, QWidget* parent)
    : LinePanel(QStringLiteral("norm_scales"), tr("Norm scale 1/std per block"), store, parent) {
    m_runs = addRunSelector();
    m_family = addHeaderMenu(tr("Norms"), QStringLiteral("normFamily"),
                             tr("Which norms to show: each sub-layer's input norm (Post-LN: its norm after "
                                "the sum) with the final norm, Peri-LN's output norms, the cross-attention "
                                "sub-layers' norms, or the encoder's; under BatchNorm, the gap between each "
                                "norm's batch statistics and its running ones"));
    connect(m_family, &QComboBox::activated, this,
            [this](int index) { setFamily(static_cast<NormFamily>(m_family->itemData(index).toInt())); });
}

void NormScalePanel::setFamily(NormFamily family) {
    m_wantedFamily = family;
    refresh();
}

NormFamily NormScalePanel::shownFamily(const RunHistory& run) const {
    if (!run.normScales.of(m_wantedFamily).empty()) return m_wantedFamily;
    for (NormFamily family : kNormFamilies)
        if (!run.normScales.of(family).empty()) return family;
    return NormFamily::Inputs;
}

void NormScalePanel::syncFamilyChoices() {
    const RunHistory* run = m_runs->selectedRun();
    const QSignalBlocker quiet(m_family);
    m_family->clear();
    if (!run) return;
    for (NormFamily family : kNormFamilies) {
        if (run->normScales.of(family).empty()) continue;
        m_family->addItem(normFamilyNames(family).family, static_cast<int>(family));
    }
    m_family->setCurrentIndex(m_family->findData(static_cast<int>(shownFamily(*run))));
}

void NormScalePanel::refresh() {
    syncFamilyChoices();
    LinePanel::refresh();
}

QString NormScalePanel::chartTitle() const {
    const RunHistory* run = shownRun();
    if (!run || shownFamily(*run) != NormFamily::BatchStatisticsGap) return LinePanel::chartTitle();
    return tr("BatchNorm: batch vs running statistics per block");
}

PlotContent NormScalePanel::buildContent(int columns) const {
    PlotContent content;
    content.x = stepAxis();
    const RunHistory* run = m_runs->selectedRun();
    content.emptyText = emptyText(
        tr("Appears after the first step with attention statistics (LayerNorm, RMSNorm or BatchNorm)"), run);
    const NormFamily family = run ? shownFamily(*run) : NormFamily::Inputs;
    const NormFamilyNames names = normFamilyNames(family);
    // BatchNorm's gap: the 2-Wasserstein distance of the batch's and the running normal, per feature
    const bool gap = family == NormFamily::BatchStatisticsGap;
    content.y = AxisSpec{
        gap ? tr("gap, running std") : tr("1/std"), true, std::nullopt, std::nullopt,
        gap ? tr("%1 solid, %2 dashed").arg(names.first.trimmed(), names.second.trimmed())
            : tr("%1: %2 solid, %3 dashed").arg(names.family, names.first.trimmed(), names.second.trimmed())};
    if (!run) return content;
    const NormScaleSeries& series = run->normScales.of(family);
    addBlockSeries(content, series.first, columns, names.first);
    addBlockSeries(content, series.second, columns, names.second, Qt::DashLine);
    if (!series.final.empty())
        content.series.push_back(PlotSeries{names.final, run->colour, pointsOf(series.final, columns), 2.4});
    content.markers = eventMarkers(store());
    return content;
}

}  // namespace normlab::ui
