// Dashboard construction, default arrangement (three rows of docks, two with a tab behind), maximise and
// coalesced refresh.
#include "ui/dashboard.h"

#include <algorithm>

#include <QCoreApplication>
#include <QDockWidget>
#include <QWindow>

#include "ui/panels/attention_head_panel.h"
#include "ui/panels/attention_logit_panel.h"
#include "ui/panels/attention_panel.h"
#include "ui/panels/block_gradient_panel.h"
#include "ui/panels/block_profile_panel.h"
#include "ui/panels/block_resid_panel.h"
#include "ui/panels/branch_share_panel.h"
#include "ui/panels/difference_panel.h"
#include "ui/panels/gradient_norm_panel.h"
#include "ui/panels/heatmap_panel.h"
#include "ui/panels/line_panel.h"
#include "ui/panels/loss_panel.h"
#include "ui/panels/norm_scale_panel.h"
#include "ui/panels/optimizer_state_panel.h"
#include "ui/panels/output_logit_panel.h"
#include "ui/panels/precision_panel.h"
#include "ui/panels/update_ratio_panel.h"

namespace normlab::ui {

namespace {
// The default arrangement's rows of panels (by panel id), top to bottom: loss | gradient profile |
// resid profile; the two heatmaps and the output logits; the dynamics. The dashboard figure uses the
// same rows.
const std::vector<std::vector<const char*>> kRows = {{"loss", "block_gradient", "block_resid"},
                                                     {"heatmap_gradient", "heatmap_resid", "output_logits"},
                                                     {"update_ratio", "attention", "attention_logits"}};
// Panels that share a place in it as a tab behind another: the front panel and the one behind, each
// with the short title its tab shows (a whole title is elided at presentation sizes); a front panel
// may have two behind it (its place's width is the widest header's among them).
struct TabPair {
    const char *front, *frontTab, *behind, *behindTab;
};
const std::vector<TabPair> kTabs = {{"output_logits", QT_TRANSLATE_NOOP("Dashboard", "Output logits"),
                                     "difference", QT_TRANSLATE_NOOP("Dashboard", "Difference B - A")},
                                    {"update_ratio", QT_TRANSLATE_NOOP("Dashboard", "Update ratio"),
                                     "optimizer_state", QT_TRANSLATE_NOOP("Dashboard", "Optimizer state")},
                                    {"block_resid", QT_TRANSLATE_NOOP("Dashboard", "Activation norm"),
                                     "norm_scales", QT_TRANSLATE_NOOP("Dashboard", "Norm scales")},
                                    {"block_resid", QT_TRANSLATE_NOOP("Dashboard", "Activation norm"),
                                     "branch_share", QT_TRANSLATE_NOOP("Dashboard", "Branch share")},
                                    {"attention", QT_TRANSLATE_NOOP("Dashboard", "Attention entropy"),
                                     "grad_norms", QT_TRANSLATE_NOOP("Dashboard", "Gradient norms")},
                                    {"attention_logits", QT_TRANSLATE_NOOP("Dashboard", "Attention logits"),
                                     "attention_heads", QT_TRANSLATE_NOOP("Dashboard", "Logits per head")},
                                    {"output_logits", QT_TRANSLATE_NOOP("Dashboard", "Output logits"),
                                     "precision", QT_TRANSLATE_NOOP("Dashboard", "Precision")}};
}  // namespace

Dashboard::Dashboard(TelemetryStore& store, QWidget* parent) : QMainWindow(parent), m_store(store) {
    setWindowFlags(Qt::Widget);
    setDockNestingEnabled(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowNestedDocks |
                   QMainWindow::AllowTabbedDocks);
    addPanel(new LossPanel(store));
    addPanel(new BlockGradientPanel(store));
    addPanel(new BlockResidPanel(store));
    addPanel(new HeatmapPanel(HeatmapPanel::Quantity::Gradient, store));
    addPanel(new HeatmapPanel(HeatmapPanel::Quantity::Resid, store));
    addPanel(new UpdateRatioPanel(store));
    addPanel(new AttentionPanel(store));
    addPanel(new AttentionLogitPanel(store));
    addPanel(new OutputLogitPanel(store));
    addPanel(new OptimizerStatePanel(store));
    addPanel(new NormScalePanel(store));
    addPanel(new GradientNormPanel(store));
    addPanel(new AttentionHeadPanel(store));
    addPanel(new DifferencePanel(store));
    addPanel(new PrecisionPanel(store));
    addPanel(new BranchSharePanel(store));
    titleDocks();
    resetLayout();

    m_refreshTimer.setSingleShot(true);
    m_refreshTimer.setInterval(kRefreshIntervalMs);
    connect(&m_refreshTimer, &QTimer::timeout, this, &Dashboard::refreshScheduled);
    connect(&store, &TelemetryStore::dataChanged, this, &Dashboard::scheduleRefresh);
    connect(&store, &TelemetryStore::runsChanged, this, &Dashboard::scheduleRefresh);
}

void Dashboard::setForkTargets(const ForkTargetLookup& lookup) {
    for (ChartPanel* panel : m_panels) panel->setForkTargets(lookup);
}

void Dashboard::addPanel(ChartPanel* panel) {
    auto* dock = new QDockWidget(panel->title(), this);
    dock->setObjectName(QStringLiteral("dock_") + panel->id());
    dock->setWidget(panel);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    connect(panel, &ChartPanel::maximiseRequested, this, &Dashboard::toggleMaximised);
    connect(panel, &ChartPanel::forkAtStepRequested, this, &Dashboard::forkAtStepRequested);
    m_panels.push_back(panel);
    m_docks.push_back(dock);
}

void Dashboard::titleDocks() {
    for (size_t i = 0; i < m_panels.size(); ++i) m_docks[i]->setWindowTitle(m_panels[i]->title());
    for (const TabPair& tab : kTabs) {
        dock(tab.front)->setWindowTitle(tr(tab.frontTab));
        dock(tab.behind)->setWindowTitle(tr(tab.behindTab));
    }
}

ChartPanel* Dashboard::panel(const QString& id) const {
    for (ChartPanel* panel : m_panels)
        if (panel->id() == id) return panel;
    return nullptr;
}

QDockWidget* Dashboard::dock(const QString& id) const {
    for (size_t i = 0; i < m_panels.size(); ++i)
        if (m_panels[i]->id() == id) return m_docks[i];
    qFatal("the dashboard has no panel '%s'",
           qPrintable(id));  // a typo in kRows / kTabs: every start shows it
}

QList<QAction*> Dashboard::panelToggleActions() const {
    QList<QAction*> actions;
    for (QDockWidget* dock : m_docks) actions << dock->toggleViewAction();
    return actions;
}

void Dashboard::resetLayout() {
    m_layoutBeforeMaximise.clear();
    if (!m_stage.isEmpty()) setStage({});
    for (QDockWidget* dock : m_docks) {
        removeDockWidget(dock);
        dock->setFloating(false);
    }
    addDockWidget(Qt::TopDockWidgetArea, dock(kRows[0][0]));
    for (size_t r = 1; r < kRows.size(); ++r)
        splitDockWidget(dock(kRows[r - 1][0]), dock(kRows[r][0]), Qt::Vertical);
    for (const auto& row : kRows)
        for (size_t c = 1; c < row.size(); ++c)
            splitDockWidget(dock(row[c - 1]), dock(row[c]), Qt::Horizontal);
    for (const TabPair& tab : kTabs) tabifyDockWidget(dock(tab.front), dock(tab.behind));
    for (QDockWidget* each : m_docks) each->show();
    for (const TabPair& tab : kTabs) dock(tab.front)->raise();
    // The loss chart carries two value axes: give it the widest share of the first row.
    resizeDocks({dock(kRows[0][0]), dock(kRows[0][1]), dock(kRows[0][2])}, {560, 420, 420}, Qt::Horizontal);
}

Figure Dashboard::figure(const QString& caption) const {
    Figure figure;
    figure.title = tr("NormLab dashboard");
    figure.caption = caption;
    for (const auto& rowPanels : kRows) {
        std::vector<FigureChartFactory> row;
        for (const char* id : rowPanels) {
            if (dock(id)->isHidden()) continue;  // closed by the user: not in the figure either
            const ChartPanel* panel = this->panel(QLatin1String(id));
            row.push_back([panel](const ChartStyle& style) { return panel->makeFigureChart(style); });
        }
        if (!row.empty()) figure.rows.push_back(std::move(row));
    }
    return figure;
}

bool Dashboard::inDefaultRows(const QString& id) {
    return std::any_of(kRows.begin(), kRows.end(), [&id](const std::vector<const char*>& row) {
        return std::any_of(row.begin(), row.end(),
                           [&id](const char* each) { return id == QLatin1String(each); });
    });
}

QByteArray Dashboard::saveLayout() const {
    // The arrangement the user made: not the stage's or a maximised chart's.
    if (!m_layoutBeforeStage.isEmpty()) return m_layoutBeforeStage;
    return m_layoutBeforeMaximise.isEmpty() ? saveState() : m_layoutBeforeMaximise;
}

bool Dashboard::restoreLayout(const QByteArray& layout) {
    if (!m_stage.isEmpty()) setStage({});
    m_layoutBeforeMaximise.clear();
    return restoreState(layout);
}

void Dashboard::toggleMaximised(ChartPanel* panel) {
    if (!m_layoutBeforeMaximise.isEmpty()) {
        restoreState(m_layoutBeforeMaximise);
        m_layoutBeforeMaximise.clear();
        // Back to the stage's own scaling, or none.
        for (ChartPanel* each : m_panels) each->setScalesWithSize(m_stage.contains(each->id()));
        return;
    }
    if (!panel) return;
    m_layoutBeforeMaximise = saveState();
    for (size_t i = 0; i < m_panels.size(); ++i) m_docks[i]->setVisible(m_panels[i] == panel);
    panel->setScalesWithSize(true);  // a maximised chart's fonts follow its size
}

void Dashboard::setPresentation(bool large) {
    for (ChartPanel* panel : m_panels) panel->setPresentation(large);
    refreshNow();
}

void Dashboard::zoomSteps(const normlab::StepRange& steps) {
    const auto last =
        static_cast<double>(std::min(steps.last, std::max(m_store.lastStep(), steps.first + 1)));
    for (ChartPanel* panel : m_panels) {
        if (auto* line = qobject_cast<LinePanel*>(panel); line && line->overSteps())
            line->plot().setZoom(std::pair{static_cast<double>(steps.first), last});
        // The block charts show the profile at the span's last step, its first faint.
        if (auto* profile = qobject_cast<BlockProfilePanel*>(panel)) profile->setStepSpan(steps);
    }
}

void Dashboard::scheduleRefresh() {
    if (!m_refreshTimer.isActive()) m_refreshTimer.start();
}

bool Dashboard::hiddenFromUser() const {
    const QWindow* handle = window()->windowHandle();
    return !isVisible() || window()->isMinimized() || (handle && !handle->isExposed());
}

void Dashboard::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    if (QWindow* handle = window()->windowHandle(); handle && handle != m_watchedWindow) {
        handle->installEventFilter(this);
        m_watchedWindow = handle;
    }
    if (m_staleWhileHidden) scheduleRefresh();
}

bool Dashboard::eventFilter(QObject* watched, QEvent* event) {
    // Runs opened at start-up (normlab --open) are read before a real display exposes the window; the
    // show event came first, so without this their charts and statuses waited for data that never came.
    if (watched == m_watchedWindow && event->type() == QEvent::Expose && m_staleWhileHidden)
        scheduleRefresh();
    return QMainWindow::eventFilter(watched, event);
}

void Dashboard::refreshScheduled() {
    m_staleWhileHidden = hiddenFromUser();
    if (!m_staleWhileHidden) refreshNow();
}

void Dashboard::refreshNow() {
    m_refreshTimer.stop();
    ++m_refreshCount;
    // CPU time of this thread, not wall time: other busy threads and processes do not inflate it.
    const double start = RefreshPacer::threadCpuSeconds();
    for (size_t i = 0; i < m_panels.size(); ++i) {
        if (!m_docks[i]->isVisible() && isVisible()) continue;
        const double panelStart = RefreshPacer::threadCpuSeconds();
        m_panels[i]->refresh();
        // Paint what changed now, inside the measurement: the cost that matters is update plus drawing.
        if (m_docks[i]->isVisible()) QCoreApplication::sendPostedEvents(window(), QEvent::UpdateRequest);
        m_panelSeconds[m_panels[i]->id()] += RefreshPacer::threadCpuSeconds() - panelStart;
    }
    m_refreshSeconds += RefreshPacer::threadCpuSeconds() - start;
    m_refreshTimer.setInterval(m_pacer.nextIntervalMs());
    emit refreshed();
}

}  // namespace normlab::ui
