// Presentation mode and its stage at 1920x1080, offscreen: the stage shows one or two big charts whose
// tick labels are at least 24 px, Page Down / Page Up cycle its last chart, leaving it (and leaving
// presentation mode) brings back the arrangement and the dock tabs as they were, and no tab title is
// elided; the colour bar's labels never overlap; a linear axis' labels fit the plot's height.
#include <QDockWidget>
#include <QFontMetricsF>
#include <QLabel>
#include <QStatusBar>
#include <QTabBar>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/main_window.h"
#include "tests/ui/ui_test_support.h"
#include "ui/dashboard.h"
#include "ui/plots/axis_range.h"
#include "ui/plots/colour_bar_ticks.h"

using normlab::gui::MainWindow;
using normlab::ui::ChartPanel;
using normlab::ui::ChartStyle;

class StageTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void stageShowsTwoBigChartsAndCycles();
    void stageChoiceIsChecked();
    void leavingPresentationKeepsTheDockTabs();
    void presentationTabTitlesAreWhole();
    void colourBarLabelsNeverOverlap();
    void linearTicksFitTheirAxis();

  private:
    QTemporaryDir m_dir;
};

namespace {
QStringList visibleCharts(MainWindow& window) {
    QStringList ids;
    for (const ChartPanel* panel : window.dashboard().panels())
        if (panel->isVisible() && !panel->visibleRegion().isEmpty()) ids << panel->id();  // not a tab behind
    return ids;
}

// Pixels of a chart's tick labels (ChartStyle::kBasePointSize at its scale) on its screen.
double tickLabelPixels(const ChartPanel& panel) {
    return panel.chartStyle().points(ChartStyle::kBasePointSize) * panel.logicalDpiY() / 72.0;
}

QTabBar* tabBarWith(QWidget& parent, const QString& text) {
    for (QTabBar* bar : parent.findChildren<QTabBar*>())
        for (int i = 0; i < bar->count(); ++i)
            if (bar->tabText(i) == text) return bar;
    return nullptr;
}
}  // namespace

void StageTest::initTestCase() {
    qputenv("NORMLAB_RUNS_DIR", m_dir.filePath(QStringLiteral("runs")).toUtf8());
}

void StageTest::stageShowsTwoBigChartsAndCycles() {
    MainWindow window;
    window.resize(1920, 1080);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QStringList before = visibleCharts(window);
    QCOMPARE(before.size(), 9);  // the default rows, tabs behind hidden

    window.setStage(true, false);
    QTest::qWait(50);
    QCOMPARE(visibleCharts(window), normlab::ui::Dashboard::defaultStage());
    QVERIFY(!window.findChild<QDockWidget*>(QStringLiteral("runsDock"))->isVisible());
    for (const QString& id : window.dashboard().stage()) {
        const ChartPanel& panel = *window.dashboard().panel(id);
        QVERIFY2(panel.width() > 800 && panel.height() > 800,
                 qPrintable(QStringLiteral("%1: %2x%3").arg(id).arg(panel.width()).arg(panel.height())));
        QVERIFY2(tickLabelPixels(panel) >= 24.0, qPrintable(QString::number(tickLabelPixels(panel))));
    }
    // The status bar keeps status and step only, so a lesson's instruction fits beside them.
    const auto statusLabelShown = [&](const QString& prefix) {
        for (const QLabel* label : window.statusBar()->findChildren<QLabel*>())
            if (label->text().startsWith(prefix)) return label->isVisible();
        return false;
    };
    QVERIFY(statusLabelShown(QStringLiteral("step:")) && !statusLabelShown(QStringLiteral("device:")));
    // Page Down puts the next chart in the last place, Page Up the one before; the first stays.
    QTest::keyClick(&window, Qt::Key_PageDown);
    QCOMPARE(window.dashboard().stage(),
             (QStringList{QStringLiteral("loss"), QStringLiteral("block_resid")}));
    QCOMPARE(visibleCharts(window), window.dashboard().stage());
    QTest::keyClick(&window, Qt::Key_PageUp);
    QTest::keyClick(&window, Qt::Key_PageUp);  // skips loss, on the stage already: wraps to the last
    QCOMPARE(window.dashboard().stage().front(), QStringLiteral("loss"));
    QCOMPARE(window.dashboard().stage().back(), window.dashboard().panels().back()->id());

    // Back from the stage: presentation mode with the arrangement from before, Runs shown.
    QTest::keyClick(&window, Qt::Key_F11, Qt::ShiftModifier);
    QVERIFY(!window.onStage());
    QTest::qWait(50);
    QCOMPARE(visibleCharts(window), before);
    QVERIFY(window.findChild<QDockWidget*>(QStringLiteral("runsDock"))->isVisible());
    QVERIFY(statusLabelShown(QStringLiteral("device:")));
    for (const ChartPanel* panel : window.dashboard().panels())
        QCOMPARE(panel->chartStyle().fontScale, ChartStyle::kPresentationScale);
    window.setPresentation(false);
    for (const ChartPanel* panel : window.dashboard().panels()) QCOMPARE(panel->chartStyle().fontScale, 1.0);

    // One chart alone fills the dashboard.
    QCOMPARE(window.setStageCharts({QStringLiteral("heatmap_gradient")}), QString());
    window.setStage(true, false);
    QTest::qWait(50);
    QCOMPARE(visibleCharts(window), QStringList{QStringLiteral("heatmap_gradient")});
    QVERIFY(tickLabelPixels(*window.dashboard().panel(QStringLiteral("heatmap_gradient"))) >= 24.0);
    window.setPresentation(false);  // leaves the stage too
    QVERIFY(!window.onStage());
    QCOMPARE(visibleCharts(window), before);
}

void StageTest::stageChoiceIsChecked() {
    MainWindow window;
    QVERIFY(window.setStageCharts({QStringLiteral("nope")}).contains(QStringLiteral("nope")));
    QVERIFY(!window.setStageCharts({QStringLiteral("loss"), QStringLiteral("loss")}).isEmpty());
    QVERIFY(!window.setStageCharts({}).isEmpty());
    QCOMPARE(window.stageCharts(),
             normlab::ui::Dashboard::defaultStage());  // nothing changed by the refusals
}

void StageTest::leavingPresentationKeepsTheDockTabs() {
    MainWindow window;
    window.resize(1680, 1020);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.findChild<QDockWidget*>(QStringLiteral("libraryDock"))->raise();
    QTest::qWait(20);
    QTabBar* right = tabBarWith(window, QStringLiteral("Run library"));
    QVERIFY(right);
    QCOMPARE(right->tabText(right->currentIndex()), QStringLiteral("Run library"));
    window.setPresentation(true, false);
    window.setPresentation(false);
    QTest::qWait(20);
    right = tabBarWith(window, QStringLiteral("Run library"));
    QVERIFY(right);
    QCOMPARE(right->tabText(right->currentIndex()), QStringLiteral("Run library"));
    QVERIFY(window.findChild<QDockWidget*>(QStringLiteral("controlsDock"))->isVisible());
}

void StageTest::presentationTabTitlesAreWhole() {
    MainWindow window;
    window.resize(1920, 1080);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.setPresentation(true, false);
    QTest::qWait(50);
    int tabs = 0;
    for (QTabBar* bar : window.dashboard().findChildren<QTabBar*>()) {
        if (!bar->isVisible()) continue;
        const QFontMetricsF metrics(bar->font());
        for (int i = 0; i < bar->count(); ++i, ++tabs)
            QVERIFY2(bar->tabRect(i).width() >= metrics.horizontalAdvance(bar->tabText(i)),
                     qPrintable(
                         QStringLiteral("'%1' in %2 px").arg(bar->tabText(i)).arg(bar->tabRect(i).width())));
    }
    QCOMPARE(tabs, 12);  // five places with a tab behind, the output logits' and activation norm's with two
}

void StageTest::colourBarLabelsNeverOverlap() {
    // From 2 to 40 decades on bars of 60 to 900 px with labels 12 to 40 px tall: every pair of labels
    // at least a label's height apart, both ends labelled, every label inside the bar.
    for (double decades : {0.3, 2.0, 7.5, 13.0, 40.0})
        for (double bar : {60.0, 150.0, 400.0, 900.0})
            for (double label : {12.0, 25.0, 40.0}) {
                const double lo = -decades, hi = 0.7;
                const auto ticks = normlab::ui::colourBarTicks(lo, hi, bar, label);
                const QString where = QStringLiteral("%1 decades, %2 px bar, %3 px labels")
                                          .arg(decades + 0.7)
                                          .arg(bar)
                                          .arg(label);
                QVERIFY2(ticks.size() >= (bar >= 2 * label ? 2u : 1u), qPrintable(where));
                QCOMPARE(ticks.front().exponent, lo);
                if (bar >= 2 * label) QCOMPARE(ticks.back().exponent, hi);
                for (size_t i = 1; i < ticks.size(); ++i) {
                    const double gap = (ticks[i].exponent - ticks[i - 1].exponent) / (hi - lo) * bar;
                    QVERIFY2(gap >= label, qPrintable(where + QStringLiteral(": gap %1").arg(gap)));
                }
            }
}

void StageTest::linearTicksFitTheirAxis() {
    // A loss axis 1.8 to 5.6 (tick 0.5) 120 px tall with 20 px labels: QtCharts would drop labels that
    // overlap (1, 3, 4 shown, 2 gone); the interval widens instead, to one that labels every tick.
    normlab::ui::AxisRange range{1.8, 5.6, 0.5, true, 1.8, 5.6};
    const double tick = normlab::ui::tickIntervalFitting(range, 120.0, 20.0);
    QVERIFY2(tick / (range.max - range.min) * 120.0 >= 20.0, qPrintable(QString::number(tick)));
    QCOMPARE(tick, 1.0);
    QCOMPARE(normlab::ui::tickIntervalFitting(range, 600.0, 20.0), 0.5);  // room: the range's own tick
    // Log axes: the base grows by whole decades until the labels fit.
    const normlab::ui::AxisRange log{1e-20, 1.0, 0.0, true, 1e-20, 1.0};
    QCOMPARE(normlab::ui::logBaseFitting(log, 1000.0, 20.0), 1000.0);  // at most ~7 labels
    QCOMPARE(normlab::ui::logBaseFitting(log, 100.0, 20.0), 1e6);
}

QTEST_MAIN(StageTest)
#include "test_stage.moc"
