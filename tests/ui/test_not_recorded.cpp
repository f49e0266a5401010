// Charts of what a run never recorded (a PyTorch script's run without optimizer state or output logits,
// as its metrics.jsonl lines read): they say "Not recorded by this run" once the run has logged a step,
// and "Appears after..." before; a run that records the field draws it.
#include <QComboBox>
#include <QTest>
#include <algorithm>

#include "tests/ui/ui_test_support.h"
#include "ui/history/telemetry_store.h"
#include "ui/panels/optimizer_state_panel.h"
#include "ui/panels/output_logit_panel.h"

using namespace normlab::ui;

class NotRecordedTest : public QObject {
    Q_OBJECT
  private slots:
    void chartsSayWhatARunDidNotRecord();
    void adamEpsilonShareIsDrawnWhereRecorded();
};

namespace {
using normlab::test::updateOfLines;
}  // namespace

void NotRecordedTest::chartsSayWhatARunDidNotRecord() {
    TelemetryStore store;
    store.addRun(0, QStringLiteral("script"), normlab::Config{}, QString());
    OptimizerStatePanel optimizer(store);
    OutputLogitPanel logits(store);
    QCOMPARE(optimizer.buildContent(100).emptyText, QStringLiteral("Appears after the first logged step"));
    QCOMPARE(logits.buildContent(100).emptyText, QStringLiteral("Appears after the first logged step"));

    store.absorb(TelemetryBatch{{updateOfLines(0, {R"({"step": 1, "loss": 2.0})"})}});
    QCOMPARE(optimizer.buildContent(100).emptyText, QStringLiteral("Appears after the first logged step"));

    store.absorb(TelemetryBatch{{updateOfLines(0, {R"({"step": 2, "loss": 1.9, "layers": [{"resid": 1.5,
        "grad": {"w_qkv": 0.1, "w_o": 0.1, "w_1": 0.2, "w_2": 0.2}}]})"})}});
    PlotContent content = optimizer.buildContent(100);
    for (const PlotSeries& series : content.series) QVERIFY(series.points.isEmpty());
    QCOMPARE(content.emptyText, QStringLiteral("Not recorded by this run"));
    QCOMPARE(logits.buildContent(100).emptyText, QStringLiteral("Not recorded by these runs"));

    // A run that records them draws them.
    store.addRun(1, QStringLiteral("engine"), normlab::Config{}, QString());
    store.absorb(
        TelemetryBatch{{updateOfLines(1, {R"({"step": 1, "loss": 2.0, "log_z_mean": 3.5, "logit_mean": 0.1,
        "layers": [{"resid": 1.5, "update_rms": 0.001, "adam_grad_rms": 0.01}]})"})}});
    content = logits.buildContent(100);
    QVERIFY(std::any_of(content.series.begin(), content.series.end(),
                        [](const PlotSeries& series) { return !series.points.isEmpty(); }));
}

// The optimizer-state chart's "epsilon share": a run's adam_eps_fraction per block, as logged (the engine
// and the bridge write it with Adam-family optimizers); a run whose lines lack it (SGD) says so.
void NotRecordedTest::adamEpsilonShareIsDrawnWhereRecorded() {
    TelemetryStore store;
    store.addRun(0, QStringLiteral("sgd"), normlab::Config{}, QString());
    OptimizerStatePanel optimizer(store);
    auto* quantity = optimizer.findChild<QComboBox*>(QStringLiteral("optimizer_state_quantity"));
    QVERIFY(quantity);
    quantity->setCurrentIndex(1);
    store.absorb(TelemetryBatch{{updateOfLines(0, {R"({"step": 1, "loss": 2.0,
        "layers": [{"resid": 1.5, "update_rms": 0.001, "adam_grad_rms": 0.01}]})"})}});
    PlotContent content = optimizer.buildContent(100);
    QCOMPARE(content.emptyText, QStringLiteral("Not recorded by this run"));
    QCOMPARE(content.y.title, QStringLiteral("share with sqrt(v) below eps"));
    QVERIFY(!content.y2);

    store.addRun(1, QStringLiteral("bridge"), normlab::Config{}, QString());
    store.absorb(TelemetryBatch{{updateOfLines(1, {R"({"step": 1, "loss": 2.0, "layers": [{"resid": 1.5,
        "adam_eps_fraction": 0.25}, {"resid": 1.6, "adam_eps_fraction": 0.5}]})",
                                                   R"({"step": 2, "loss": 1.9, "layers": [{"resid": 1.5,
        "adam_eps_fraction": 0.125}, {"resid": 1.6, "adam_eps_fraction": 0.75}]})"})}});
    auto* selector = optimizer.findChild<RunSelector*>();
    QVERIFY(selector);
    selector->setCurrentIndex(selector->findText(QStringLiteral("bridge")));
    content = optimizer.buildContent(100);
    QCOMPARE(content.series.size(), size_t(2));  // one line per block
    QCOMPARE(content.series[0].points.last().y(), 0.125);
    QCOMPARE(content.series[1].points.last().y(), 0.75);
    quantity->setCurrentIndex(0);              // back to the update and sqrt(v)
    QVERIFY(!optimizer.buildContent(100).y2);  // its lines carry no adam_grad_rms: no empty sqrt(v) axis
    selector->setCurrentIndex(selector->findText(QStringLiteral("sgd")));  // whose line has one
    QVERIFY(optimizer.buildContent(100).y2);
}

QTEST_MAIN(NotRecordedTest)
#include "test_not_recorded.moc"
