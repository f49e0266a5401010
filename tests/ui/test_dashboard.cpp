// The dashboard's coalescing: however many telemetry batches arrive, the charts redraw on a timer of
// at least 33 ms (at most ~30 redraws a second), and every panel shows the latest data afterwards.
#include <QElapsedTimer>
#include <QTest>

#include "ui/dashboard.h"
#include "ui/panels/attention_head_panel.h"
#include "ui/panels/loss_panel.h"

using namespace normlab::ui;

class DashboardTest : public QObject {
    Q_OBJECT
  private slots:
    void redrawsAreCoalesced();
    void maximiseShowsOnePanelAndRestores();
    void stepAxisEndsAtTheLastStepOnceNoRunTrains();
    void headPanelShowsEachHeadOfTheChosenBlock();
};

void DashboardTest::redrawsAreCoalesced() {
    TelemetryStore store;
    store.addRun(0, QStringLiteral("run"), normlab::Config{}, QString());
    Dashboard dashboard(store);
    dashboard.resize(1200, 800);
    dashboard.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dashboard));
    QTest::qWait(100);
    const int before = dashboard.refreshCount();
    QElapsedTimer clock;
    clock.start();
    int step = 0;
    // 2000 batches of one step each, as fast as the event loop takes them (far above 30 Hz).
    while (step < 2000) {
        RunUpdate update;
        update.runId = 0;
        normlab::StepRecord record;
        record.step = ++step;
        record.loss = 3.0;
        record.layers.resize(4);
        update.records.push_back(record);
        update.step = step;
        store.absorb(TelemetryBatch{{update}});
        if (step % 20 == 0) QCoreApplication::processEvents();
    }
    QTest::qWait(2 * Dashboard::kSlowestRefreshMs);
    const double elapsedMs = clock.elapsed();
    const int redraws = dashboard.refreshCount() - before;
    QVERIFY(redraws >= 1);
    QVERIFY2(redraws <= elapsedMs / Dashboard::kRefreshIntervalMs + 2,
             qPrintable(QStringLiteral("%1 redraws in %2 ms").arg(redraws).arg(elapsedMs)));
    QVERIFY(dashboard.refreshIntervalMs() >= Dashboard::kRefreshIntervalMs);
    // The last redraw saw the last step.
    auto* loss = static_cast<LossPanel*>(dashboard.panel(QStringLiteral("loss")));
    const PlotContent content = loss->plot().content();
    QVERIFY(!content.series.empty());
    QCOMPARE(content.series.front().points.back().x(), 2000.0);
}

void DashboardTest::maximiseShowsOnePanelAndRestores() {
    TelemetryStore store;
    Dashboard dashboard(store);
    dashboard.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dashboard));
    ChartPanel* loss = dashboard.panel(QStringLiteral("loss"));
    dashboard.toggleMaximised(loss);
    int visible = 0;
    for (ChartPanel* panel : dashboard.panels()) visible += panel->isVisible() ? 1 : 0;
    QCOMPARE(visible, 1);
    QVERIFY(loss->isVisible());
    dashboard.toggleMaximised(loss);
    visible = 0;
    for (ChartPanel* panel : dashboard.panels()) visible += panel->isVisible() ? 1 : 0;
    QCOMPARE(visible, int(dashboard.panels().size()));
}

QTEST_MAIN(DashboardTest)
// While a run trains, the time charts' step axis keeps room to grow (no fixed end); once no run
// trains, it ends at the last step, so a finished chart and its export have no empty margin.
void DashboardTest::stepAxisEndsAtTheLastStepOnceNoRunTrains() {
    TelemetryStore store;
    store.addRun(0, QStringLiteral("run"), normlab::Config{}, QString());
    LossPanel panel(store);
    RunUpdate update;
    update.runId = 0;
    for (int step = 1; step <= 300; ++step) {
        normlab::StepRecord record;
        record.step = step;
        record.loss = 3.0;
        update.records.push_back(record);
    }
    update.step = 300;
    store.absorb(TelemetryBatch{{update}});
    QVERIFY(!panel.buildContent(200).x.max.has_value());

    RunUpdate finished;
    finished.runId = 0;
    finished.step = 300;
    finished.status = normlab::RunStatus::Completed;
    store.absorb(TelemetryBatch{{finished}});
    const PlotContent content = panel.buildContent(200);
    QVERIFY(content.x.max.has_value());
    QCOMPARE(*content.x.max, 300.0);
    QCOMPARE(content.x.title, QStringLiteral("step"));
}

void DashboardTest::headPanelShowsEachHeadOfTheChosenBlock() {
    TelemetryStore store;
    store.addRun(0, QStringLiteral("run"), normlab::Config{}, QString());
    AttentionHeadPanel panel(store);
    RunUpdate update;
    update.runId = 0;
    for (int step = 1; step <= 4; ++step) {  // 3 blocks of 2 heads; step 3 without attention statistics
        normlab::StepRecord record;
        record.step = step;
        record.loss = 3.0;
        record.layers.resize(3);
        if (step != 3)
            for (int b = 0; b < 3; ++b) {
                for (int h = 0; h < 2; ++h) record.attn_head_max_logit.push_back(100.0 * step + 10.0 * b + h);
                record.layers[static_cast<size_t>(b)].attn_max_logit = 100.0 * step + 10.0 * b + 1;
            }
        update.records.push_back(record);
    }
    update.step = 4;
    store.absorb(TelemetryBatch{{update}});
    // By default the block whose largest logit is greatest at the newest step.
    QCOMPARE(panel.buildContent(0).series[0].name, QStringLiteral("block 2 head 0"));
    panel.setBlock(1);
    const PlotContent content = panel.buildContent(0);
    QCOMPARE(content.series.size(), size_t(2));
    QCOMPARE(content.series[1].name, QStringLiteral("block 1 head 1"));
    const QVector<QPointF> expected = {{1, 111}, {2, 211}, {4, 411}};
    QCOMPARE(content.series[1].points, expected);
    QCOMPARE(content.series[0].points.back(), QPointF(4, 410));
    QVERIFY(content.y.log);
    panel.setBlock(7);  // beyond the run's blocks: its last block
    QCOMPARE(panel.buildContent(0).series[0].name, QStringLiteral("block 2 head 0"));
}

#include "test_dashboard.moc"
