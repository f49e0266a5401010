// The norm-scale chart: each family of norms a run has (and only those) among its choices; per block the
// family's two norms with a gap on the step without attention statistics, and the final norm's line.
#include <QComboBox>
#include <QTest>

#include "ui/history/telemetry_store.h"
#include "ui/panels/norm_scale_panel.h"

using namespace normlab::ui;

class NormScalePanelTest : public QObject {
    Q_OBJECT
  private slots:
    void showsEachFamilyTheRunHas();
};

namespace {
// An encoder-decoder's logged steps 1-3 with 2 decoder and 1 encoder blocks; step 2 has no attention
// statistics (every scale 0). Values encode step, block and norm: 100 step + 10 block + norm.
RunUpdate encoderDecoderSteps() {
    RunUpdate update;
    update.runId = 0;
    for (int step = 1; step <= 3; ++step) {
        normlab::StepRecord record;
        record.step = step;
        record.loss = 2.0;
        record.layers.resize(2);
        record.encoder_layers.resize(1);
        record.telemetry = normlab::StepTelemetry{};
        const bool measured = step != 2;
        for (int b = 0; b < 2; ++b) {
            normlab::LayerTelemetry& layer = record.layers[static_cast<size_t>(b)];
            layer.has_cross = true;
            layer.norm1_scale_mean = measured ? 100.0 * step + 10 * b + 1 : 0.0;
            layer.norm2_scale_mean = measured ? 100.0 * step + 10 * b + 2 : 0.0;
            layer.norm_cross_scale_mean = measured ? 100.0 * step + 10 * b + 3 : 0.0;
        }
        record.encoder_layers[0].norm1_scale_mean = measured ? 100.0 * step + 5 : 0.0;
        record.encoder_layers[0].norm2_scale_mean = measured ? 100.0 * step + 6 : 0.0;
        record.telemetry->final_norm_scale_mean = measured ? 100.0 * step + 7 : 0.0;
        record.telemetry->encoder_final_norm_scale_mean = measured ? 100.0 * step + 8 : 0.0;
        update.records.push_back(record);
    }
    update.step = 3;
    return update;
}
}  // namespace

void NormScalePanelTest::showsEachFamilyTheRunHas() {
    TelemetryStore store;
    store.addRun(0, QStringLiteral("run"), normlab::Config{}, QString());
    NormScalePanel panel(store);
    store.absorb(TelemetryBatch{{encoderDecoderSteps()}});
    panel.refresh();
    auto* families = panel.findChild<QComboBox*>(QStringLiteral("normFamily"));
    QVERIFY(families);
    QCOMPARE(families->count(), 3);  // no Peri-LN output norms in this run
    QCOMPARE(families->currentText(), QStringLiteral("Sub-layer inputs"));

    PlotContent content = panel.buildContent(0);
    QCOMPARE(content.series.size(), size_t(5));  // 2 blocks x 2 norms, and the final norm
    QCOMPARE(content.series[1].name, QStringLiteral("block 1 attention"));
    QCOMPARE(content.series[1].points, (QVector<QPointF>{{1, 111}, {3, 311}}));
    QCOMPARE(content.series[2].name, QStringLiteral("block 0 FFN"));
    QCOMPARE(content.series[2].style, Qt::DashLine);
    QCOMPARE(content.series[4].name, QStringLiteral("final norm"));
    QCOMPARE(content.series[4].points, (QVector<QPointF>{{1, 107}, {3, 307}}));
    QVERIFY(content.y.log);

    panel.setFamily(NormFamily::PeriOutputs);  // not in this run: the first family it has
    QCOMPARE(panel.buildContent(0).series[4].name, QStringLiteral("final norm"));

    panel.setFamily(NormFamily::Encoder);
    QCOMPARE(families->currentText(), QStringLiteral("Encoder"));
    content = panel.buildContent(0);
    QCOMPARE(content.series.size(), size_t(3));
    QCOMPARE(content.series[1].points, (QVector<QPointF>{{1, 106}, {3, 306}}));
    QCOMPARE(content.series[2].name, QStringLiteral("encoder final norm"));
    QCOMPARE(content.series[2].points, (QVector<QPointF>{{1, 108}, {3, 308}}));

    panel.setFamily(NormFamily::CrossAttention);
    content = panel.buildContent(0);
    QCOMPARE(content.series.size(), size_t(4));  // no final norm in this family
    QCOMPARE(content.series[1].points, (QVector<QPointF>{{1, 113}, {3, 313}}));
    QVERIFY(content.series[3].points.isEmpty());  // no Peri-LN output norm on cross-attention
}

QTEST_MAIN(NormScalePanelTest)
#include "test_norm_scale_panel.moc"
