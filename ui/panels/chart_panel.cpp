// ChartPanel layout, caption, and its context menu: export by format (file dialog, size/DPI dialog for
// PNG, error dialog when writing fails) and maximise.
#include "ui/panels/chart_panel.h"

#include <QContextMenuEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/export/panel_export.h"
#include "ui/panels/run_captions.h"
#include "ui/panels/run_selector.h"

namespace normlab::ui {

ChartPanel::ChartPanel(const QString& id, const QString& title, const TelemetryStore& store, QWidget* parent)
    : QWidget(parent), m_id(id), m_title(title), m_store(store) {
    setObjectName(id);
    setWindowTitle(title);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);
    m_header = new QHBoxLayout;
    m_header->setContentsMargins(4, 0, 4, 0);
    layout->addLayout(m_header);
}

const RunHistory* ChartPanel::shownRun() const {
    return m_runSelector ? m_runSelector->selectedRun() : nullptr;
}

QString ChartPanel::shownTitle() const {
    const RunHistory* run = shownRun();
    return run ? QStringLiteral("%1: %2").arg(chartTitle(), run->name) : chartTitle();
}

RunSelector* ChartPanel::addRunSelector() {
    auto* runs = m_runSelector = new RunSelector(m_store);
    header()->addWidget(new QLabel(tr("Run")));
    header()->addWidget(runs);
    header()->addStretch();
    connect(runs, &QComboBox::currentIndexChanged, this, &ChartPanel::refresh);
    return runs;
}

QComboBox* ChartPanel::addHeaderMenu(const QString& label, const QString& objectName,
                                     const QString& toolTip) {
    auto* menu = new QComboBox;
    menu->setObjectName(objectName);
    menu->setToolTip(toolTip);
    header()->addWidget(new QLabel(label));
    header()->addWidget(menu);
    header()->addStretch();
    return menu;
}

void ChartPanel::setPresentation(bool large) {
    m_presentation = large;
    updateStyle();
}

void ChartPanel::setScalesWithSize(bool scales) {
    m_scalesWithSize = scales;
    updateStyle();
}

void ChartPanel::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (m_scalesWithSize) updateStyle();
}

void ChartPanel::updateStyle() {
    double scale = m_presentation ? ChartStyle::kPresentationScale : 1.0;
    if (m_scalesWithSize) scale = std::max(scale, ChartStyle::scaleForSize(width(), height()));
    // Remaking a chart's axes costs a relayout: small size changes keep the fonts they have.
    if (std::abs(scale - m_style.fontScale) < 0.03 * m_style.fontScale) return;
    m_style.fontScale = scale;
    applyStyle(m_style);
}

void ChartPanel::setChartWidget(QWidget* chart) {
    m_chart = chart;
    m_chart->setWindowTitle(m_title);
    static_cast<QVBoxLayout*>(layout())->addWidget(chart, 1);
}

QString ChartPanel::caption() const {
    return captionForRuns(m_store);
}

void ChartPanel::contextMenuEvent(QContextMenuEvent* event) {
    QMenu menu(this);
    const struct {
        const char* label;
        const char* suffix;
    } formats[] = {{"Export PNG...", "png"},
                   {"Export SVG...", "svg"},
                   {"Export PDF...", "pdf"},
                   {"Export CSV data...", "csv"}};
    for (const auto& format : formats) {
        const QString suffix = QString::fromLatin1(format.suffix);
        menu.addAction(tr(format.label), this,
                       [this, suffix] { exportPanelInteractively(*this, suffix, this); });
    }
    menu.addSeparator();
    addViewActions(menu, m_chart->mapFrom(this, event->pos()));
    menu.addAction(tr("Maximise / restore"), this, [this] { emit maximiseRequested(this); });
    menu.exec(event->globalPos());
}

}  // namespace normlab::ui
