// The precision chart (ui/panels/precision_panel.h): a run in fp32 says it did not record the precision
// fields; a run in fp16 draws each block's gradient (solid) and activation (dashed) shares, its headroom
// and its loss scale as logged, and a dynamic scale's skipped steps become "skipped" markers.
#include <QComboBox>
#include <QTest>

#include "tests/ui/ui_test_support.h"
#include "ui/history/telemetry_store.h"
#include "ui/panels/event_markers.h"
#include "ui/panels/precision_panel.h"

using namespace normlab::ui;

class PrecisionPanelTest : public QObject {
    Q_OBJECT
  private slots:
    void aRunInFp16DrawsItsBlocksAndScaleAndFp32SaysNotRecorded();
    void untilOneIsChosenItShowsARunThatRecordsPrecision();
};

namespace {
using normlab::test::updateOfLines;
}  // namespace

void PrecisionPanelTest::aRunInFp16DrawsItsBlocksAndScaleAndFp32SaysNotRecorded() {
    TelemetryStore store;
    store.addRun(0, QStringLiteral("fp32"), normlab::Config{}, QString());
    PrecisionPanel panel(store);
    store.absorb(
        TelemetryBatch{{updateOfLines(0, {R"({"step": 1, "loss": 2.0, "layers": [{"resid": 1.5}]})"})}});
    QCOMPARE(panel.buildContent(100).emptyText, QStringLiteral("Not recorded by this run"));

    store.addRun(1, QStringLiteral("fp16"), normlab::Config{}, QString());
    RunUpdate fp16 = updateOfLines(1, {R"({"step": 1, "loss": 2.0, "loss_scale": 65536, "skipped_steps": 1,
        "layers": [{"resid": 1.5, "act_overflow": 0, "act_underflow": 0.001, "grad_overflow": 0,
        "grad_underflow": 0.25, "stream_headroom": 12.5}, {"resid": 1.6, "act_overflow": 0.01,
        "act_underflow": 0.002, "grad_overflow": 0, "grad_underflow": 0.5, "stream_headroom": 11.0}]})"});
    fp16.events.push_back({1, "skipped_step", "step 1 skipped", "", "", -1});
    store.absorb(TelemetryBatch{{fp16}});
    auto* selector = panel.findChild<RunSelector*>();
    QVERIFY(selector);
    selector->setCurrentIndex(selector->findText(QStringLiteral("fp16")));
    PlotContent content = panel.buildContent(100);
    QCOMPARE(content.series.size(), size_t(4));  // per block: gradients, then activations (dashed)
    QCOMPARE(content.series[0].points.last().y(), 0.25);
    QCOMPARE(content.series[1].points.last().y(), 0.5);
    QCOMPARE(content.series[3].points.last().y(), 0.002);
    QCOMPARE(content.series[3].style, Qt::DashLine);
    QVERIFY(std::any_of(content.markers.begin(), content.markers.end(),
                        [](const PlotMarker& marker) { return marker.label == QStringLiteral("skipped"); }));

    auto* quantity = panel.findChild<QComboBox*>(QStringLiteral("precision_quantity"));
    QVERIFY(quantity);
    quantity->setCurrentIndex(1);  // overflow
    QCOMPARE(panel.buildContent(100).series[3].points.last().y(), 0.01);
    quantity->setCurrentIndex(2);  // headroom
    content = panel.buildContent(100);
    QCOMPARE(content.series.size(), size_t(2));
    QCOMPARE(content.series[1].points.last().y(), 11.0);
    quantity->setCurrentIndex(3);  // loss scale
    content = panel.buildContent(100);
    QCOMPARE(content.series.size(), size_t(1));
    QCOMPARE(content.series[0].points.last().y(), 65536.0);
    QVERIFY(content.y.log);
}

// A lesson's fp32 baseline comes first; the chart opens on its first run in another precision (or with
// a loss scale), and keeps the run the user picks.
void PrecisionPanelTest::untilOneIsChosenItShowsARunThatRecordsPrecision() {
    TelemetryStore store;
    PrecisionPanel panel(store);
    auto* selector = panel.findChild<RunSelector*>();
    QVERIFY(selector);
    store.addRun(0, QStringLiteral("fp32"), normlab::Config{}, QString());
    QCOMPARE(selector->currentText(), QStringLiteral("fp32"));  // nothing else yet
    normlab::Config scaled;
    scaled.train.loss_scale = "1024";
    store.addRun(1, QStringLiteral("fp32, scaled"), scaled, QString());
    normlab::Config fp16;
    fp16.train.precision = normlab::NumberFormat::Fp16;
    store.addRun(2, QStringLiteral("fp16"), fp16, QString());
    QCOMPARE(selector->currentText(), QStringLiteral("fp32, scaled"));
    selector->setCurrentIndex(selector->findText(QStringLiteral("fp32")));
    store.addRun(3, QStringLiteral("bf16"), fp16, QString());
    QCOMPARE(selector->currentText(), QStringLiteral("fp32"));
}

QTEST_MAIN(PrecisionPanelTest)
#include "test_precision_panel.moc"
