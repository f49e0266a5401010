// DifferencePanel: two run selectors (B defaults to the second run shown), a quantity menu and a block
// box; the curve is seriesDifference of the chosen series, in B's colour, over a dotted zero line.
#include "ui/panels/difference_panel.h"

#include <QLabel>
#include <QSpinBox>

#include "ui/history/group_values.h"
#include "ui/history/series_difference.h"
#include "ui/panels/event_markers.h"

namespace normlab::ui {

namespace {
// A per-block series of a run, or nullptr where the run has no such block.
const DecimatedSeries* blockSeries(const std::vector<DecimatedSeries>& perBlock, int block) {
    return block >= 0 && block < static_cast<int>(perBlock.size()) ? &perBlock[block] : nullptr;
}
}  // namespace

const std::vector<DifferencePanel::Quantity>& DifferencePanel::quantities() {
    static const std::vector<Quantity> table = {
        {tr("loss"), false, [](const RunHistory& run, int) { return &run.loss; }, Final::Loss},
        {tr("validation loss"), false, [](const RunHistory& run, int) { return &run.valLoss; },
         Final::ValidationLoss},
        {tr("gradient norm"), false, [](const RunHistory& run, int) { return &run.gradNorm; }},
        {tr("largest attention logit"), false, [](const RunHistory& run, int) { return &run.attnMaxLogit; }},
        {tr("mean log Z"), false, [](const RunHistory& run, int) { return &run.logZMean; }},
        {tr("update / parameter ratio"), true,
         [](const RunHistory& run, int block) { return blockSeries(run.updateRatio, block); }},
        {tr("largest attention logit"), true,
         [](const RunHistory& run, int block) { return blockSeries(run.blockMaxLogit, block); }},
        {tr("query RMS"), true,
         [](const RunHistory& run, int block) { return blockSeries(run.queryRms, block); }},
        {tr("key RMS"), true,
         [](const RunHistory& run, int block) { return blockSeries(run.keyRms, block); }},
        {tr("Adam gradient RMS"), true,
         [](const RunHistory& run, int block) { return blockSeries(run.adamGradRms, block); }},
        {tr("Adam epsilon share"), true,
         [](const RunHistory& run, int block) { return blockSeries(run.adamEpsFraction, block); }},
    };
    return table;
}

DifferencePanel::DifferencePanel(const TelemetryStore& store, QWidget* parent)
    : LinePanel(QStringLiteral("difference"), tr("Difference B - A"), store, parent) {
    m_first = new RunSelector(store);
    m_first->setObjectName(QStringLiteral("differenceA"));
    m_second = new RunSelector(store, 1);
    m_second->setObjectName(QStringLiteral("differenceB"));
    m_quantity = new QComboBox;
    m_quantity->setObjectName(QStringLiteral("differenceQuantity"));
    for (const Quantity& each : quantities())
        m_quantity->addItem(each.perBlock ? tr("%1 at block").arg(each.label) : each.label);
    m_block = new QSpinBox;
    m_block->setObjectName(QStringLiteral("differenceBlock"));
    m_block->setToolTip(tr("The block of a per-block quantity"));
    m_quantity->setToolTip(tr("What B - A is taken of"));
    m_block->setRange(0, 4095);
    m_block->setEnabled(false);
    for (auto [label, widget] : {std::pair<QString, QWidget*>{tr("B"), m_second},
                                 {tr("- A"), m_first},
                                 {QString(), m_quantity},
                                 {QString(), m_block}}) {
        if (!label.isEmpty()) header()->addWidget(new QLabel(label));
        header()->addWidget(widget);
    }
    header()->addStretch();
    for (QComboBox* box : {static_cast<QComboBox*>(m_first), static_cast<QComboBox*>(m_second), m_quantity}) {
        // Narrow by default (the chart shares its column with the loss chart); the list opens wide.
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(5);
        connect(box, &QComboBox::currentIndexChanged, this, &ChartPanel::refresh);
    }
    connect(m_quantity, &QComboBox::currentIndexChanged, this,
            [this] { m_block->setEnabled(quantity().perBlock); });
    connect(m_block, &QSpinBox::valueChanged, this, &ChartPanel::refresh);
}

void DifferencePanel::showPair(int a, int b) {
    for (auto [selector, id] : {std::pair<RunSelector*, int>{m_first, a}, {m_second, b}})
        if (const int index = selector->findData(id); index >= 0) selector->setCurrentIndex(index);
}

const DifferencePanel::Quantity& DifferencePanel::quantity() const {
    const int index = m_quantity->currentIndex();
    return quantities().at(index >= 0 ? static_cast<size_t>(index) : 0);
}

QString DifferencePanel::quantityLabel() const {
    return quantity().perBlock ? tr("%1 at block %2").arg(quantity().label).arg(m_block->value())
                               : quantity().label;
}

QString DifferencePanel::shownTitle() const {
    const RunHistory* a = m_first->selectedRun();
    const RunHistory* b = m_second->selectedRun();
    if (!a || !b || a == b) return title();
    return tr("%1: %2 (%3 - %4)").arg(title(), quantityLabel(), b->name, a->name);
}

PlotContent DifferencePanel::buildContent(int columns) const {
    (void)columns;  // every matched step: the difference is drawn whole (two runs, one curve)
    PlotContent content;
    content.x = stepAxis();
    content.y.title = tr("B - A: %1").arg(quantityLabel());
    const RunHistory* a = m_first->selectedRun();
    const RunHistory* b = m_second->selectedRun();
    if (!a || !b || a == b) {
        content.emptyText = tr("Pick two different runs: B and A (a fork and its parent, say)");
        return content;
    }
    const DecimatedSeries* first = quantity().series(*a, m_block->value());
    const DecimatedSeries* second = quantity().series(*b, m_block->value());
    const QVector<QPointF> points = first && second ? seriesDifference(*first, *second) : QVector<QPointF>{};
    if (points.isEmpty()) {
        content.emptyText = tr("No step that both runs hold a %1 for yet").arg(quantityLabel());
        return content;
    }
    PlotSeries zero{tr("zero"),
                    QColor(Qt::gray),
                    {{points.front().x(), 0.0}, {points.back().x(), 0.0}},
                    1.0,
                    Qt::DotLine};
    zero.inLegend = false;
    content.series.push_back(zero);
    content.series.push_back({QStringLiteral("%1 - %2").arg(b->name, a->name), b->colour, points});
    content.markers = eventMarkers(store());
    if (quantity().compared != Final::None)
        content.note = comparisonText(store(), *a, *b, quantity().compared == Final::ValidationLoss);
    return content;
}

}  // namespace normlab::ui
