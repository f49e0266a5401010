// Bounded, decimated history: memory stays bounded over 100k+ steps, a single-step spike survives
// both storage compaction and per-pixel decimation, heatmap merges keep the maximum, and a run's
// history absorbs records (step-1 reference, per-block series) as the charts expect.
#include <QTest>
#include <cmath>

#include "engine/core/not_recorded.h"
#include "ui/history/decimated_series.h"
#include "ui/history/heatmap_history.h"
#include "ui/history/progress_rate.h"
#include "ui/history/run_history.h"

using normlab::ui::DecimatedSeries;
using normlab::ui::HeatmapHistory;
using normlab::ui::ProgressRate;
using normlab::ui::speedText;

class HistoryTest : public QObject {
    Q_OBJECT
  private slots:
    void shortSeriesIsExact();
    void boundedOverLongRuns();
    void singleStepSpikeSurvivesCompactionAndDecimation();
    void envelopeKeepsOrderOfMinAndMax();
    void nonFiniteValuesAreSkipped();
    void heatmapMergeKeepsMaximumAndNonFinite();
    void runHistoryAbsorbsRecords();
    void blockProfilesKeepEvenlySpreadSteps();
    void runHistoryStaysBoundedOverLongRuns();
    void progressRateIsEachRunsWallClockPace();
};

void HistoryTest::shortSeriesIsExact() {
    DecimatedSeries series(64);
    for (int step = 1; step <= 50; ++step) series.append(step, 1.0 / step);
    const QVector<QPointF> samples = series.samples();
    QCOMPARE(samples.size(), 50);
    for (int i = 0; i < 50; ++i) {
        QCOMPARE(samples[i].x(), double(i + 1));
        QCOMPARE(samples[i].y(), 1.0 / (i + 1));
    }
}

void HistoryTest::boundedOverLongRuns() {
    DecimatedSeries series(4096);
    for (int step = 1; step <= 200000; ++step) series.append(step, std::sin(step * 0.01));
    QVERIFY(series.bucketCount() <= 4096);
    QVERIFY(series.bucketCount() >= 2048);  // compaction halves, never empties
    QCOMPARE(*series.lastX(), 200000.0);
    QCOMPARE(series.buckets().front().x_first, 1.0);
    const auto range = series.valueRange(false);
    QVERIFY(range->first < -0.999 && range->second > 0.999);
}

void HistoryTest::singleStepSpikeSurvivesCompactionAndDecimation() {
    DecimatedSeries series(1024);
    const int spikeStep = 73141;
    for (int step = 1; step <= 150000; ++step)
        series.append(step, step == spikeStep ? 50.0 : 2.0 + 1e-4 * std::sin(step));
    QVERIFY(series.bucketCount() <= 1024);
    for (int columns : {1, 37, 300, 1920}) {
        const QVector<QPointF> points = series.envelope(1.0, 150000.0, columns);
        QVERIFY(points.size() <= 2 * columns);
        const auto peak =
            std::max_element(points.begin(), points.end(), [](auto a, auto b) { return a.y() < b.y(); });
        QCOMPARE(peak->y(), 50.0);
        QCOMPARE(peak->x(), double(spikeStep));  // drawn where it happened
    }
    // A downward spike (a dip) survives as well.
    DecimatedSeries dips(256);
    for (int step = 1; step <= 100000; ++step) dips.append(step, step == 4242 ? -9.0 : 1.0);
    const QVector<QPointF> points = dips.envelope(1.0, 100000.0, 100);
    QVERIFY(std::any_of(points.begin(), points.end(),
                        [](const QPointF& p) { return p.y() == -9.0 && p.x() == 4242.0; }));
}

void HistoryTest::envelopeKeepsOrderOfMinAndMax() {
    DecimatedSeries series(16);
    // One column holding a rise then a fall: the max must come before the min.
    series.append(1, 0.0);
    series.append(2, 10.0);
    series.append(3, -10.0);
    series.append(4, 0.0);
    const QVector<QPointF> points = series.envelope(1.0, 4.0, 1);
    QCOMPARE(points.size(), 2);
    QCOMPARE(points[0], QPointF(2.0, 10.0));
    QCOMPARE(points[1], QPointF(3.0, -10.0));
}

void HistoryTest::nonFiniteValuesAreSkipped() {
    DecimatedSeries series(16);
    series.append(1, 1.0);
    series.append(2, NAN);
    series.append(3, INFINITY);
    series.append(4, 2.0);
    QCOMPARE(series.samples().size(), 2);
    QCOMPARE(*series.valueRange(false), std::make_pair(1.0, 2.0));
    QCOMPARE(*series.valueRange(true), std::make_pair(1.0, 2.0));
}

void HistoryTest::heatmapMergeKeepsMaximumAndNonFinite() {
    HeatmapHistory heat(8);
    for (int step = 1; step <= 1000; ++step) {
        std::vector<double> column = {1.0, 1.0, 1.0};
        if (step == 500) column[1] = 100.0;
        if (step == 900) column[2] = NAN;
        heat.append(step, column);
    }
    QVERIFY(heat.columns().size() <= 8);
    double peak = 0.0;
    bool nonFinite = false;
    for (const auto& column : heat.columns()) {
        peak = std::max(peak, column.values[1]);
        nonFinite |= !std::isfinite(column.values[2]);
        QCOMPARE(column.values[0], 1.0);
    }
    QCOMPARE(peak, 100.0);
    QVERIFY(nonFinite);
    QCOMPARE(heat.columns().front().x_first, 1.0);
    QCOMPARE(heat.columns().back().x_last, 1000.0);
}

void HistoryTest::runHistoryAbsorbsRecords() {
    normlab::ui::RunHistory run;
    normlab::ui::RunUpdate update;
    for (int step = 1; step <= 3; ++step) {
        normlab::StepRecord record;
        record.step = step;
        record.loss = 5.0 - step;
        record.lr = 1e-3;
        record.layers.resize(2);
        record.layers[0].grad.w_2 = 3.0 * step;
        record.layers[0].grad.w_1 = 4.0 * step;
        record.layers[1].resid = 2.0 * step;
        record.layers[0].attn_entropy = 1.0;
        record.layers[1].attn_entropy = 2.0;
        record.layers[1].attn_max_logit = 7.0;
        if (step == 2) record.val_loss = 3.5;
        update.records.push_back(record);
    }
    update.step = 3;
    QCOMPARE(run.statusText(), QStringLiteral("not started"));
    run.absorb(update);
    QCOMPARE(run.statusText(), QStringLiteral("running"));
    run.paused = true;
    QCOMPARE(run.statusText(), QStringLiteral("paused"));
    QCOMPARE(run.loss.samples().size(), 3);
    QCOMPARE(run.valLoss.samples().size(), 1);
    QCOMPARE(run.profiles.first().blocks[0].w_2, 3.0);
    QCOMPARE(run.profiles.latest().blocks[0].w_2, 9.0);
    QCOMPARE(run.profiles.latest().step, int64_t(3));
    QCOMPARE(run.profiles.atOrBefore(2).blocks[1].resid, 4.0);
    QCOMPARE(normlab::ui::gradientOf(run.profiles.latest().blocks[0], normlab::ui::GradientTensor::Total),
             15.0);  // sqrt(9^2+12^2)
    // A matrix the block lacks (theory mode's w_o) is left out of the total; a diverged one's NaN is not.
    normlab::ui::BlockValues theory{3.0, normlab::kNotRecorded, 4.0, 12.0, 1.0};
    QCOMPARE(normlab::ui::gradientOf(theory, normlab::ui::GradientTensor::Total), 13.0);
    theory.w_1 = std::nan("");
    QVERIFY(std::isnan(normlab::ui::gradientOf(theory, normlab::ui::GradientTensor::Total)));
    QVERIFY(normlab::recorded(normlab::ui::gradientOf(theory, normlab::ui::GradientTensor::Total)));
    QCOMPARE(*run.attnEntropyMean.lastValue(), 1.5);
    QCOMPARE(*run.attnMaxLogit.lastValue(), 7.0);
    QCOMPARE(run.gradHeat.columns().size(), size_t(3));
    QCOMPARE(run.residHeat.columns().back().values[1], 6.0);
    QCOMPARE(run.updateRatio.size(), size_t(2));

    // Starting again forgets every step, BatchNorm's validation on batch statistics included (a
    // hand-kept list of what to clear missed it), and keeps what the run is.
    run.name = QStringLiteral("kept");
    run.valLossBatchStats.append(2.0, 3.25);
    run.clearHistory();
    QCOMPARE(run.name, QStringLiteral("kept"));
    QCOMPARE(run.statusText(), QStringLiteral("not started"));
    for (const DecimatedSeries* series : {&run.loss, &run.valLoss, &run.valLossBatchStats, &run.attnMaxLogit,
                                          &run.gradEmbedding, &run.logZMean})
        QCOMPARE(series->samples().size(), 0);
    QVERIFY(run.updateRatio.empty() && run.gradHeat.columns().empty() &&
            run.profiles.latest().blocks.empty());
}

void HistoryTest::blockProfilesKeepEvenlySpreadSteps() {
    // 1000 steps into 256 places: every 4th step kept (step 100 exactly), the first and the newest
    // always; a step between kept ones gives the one before it.
    normlab::ui::BlockProfiles profiles;
    std::vector<normlab::LayerTelemetry> layers(2);
    for (int step = 1; step <= 1000; ++step) {
        layers[1].resid = step;
        layers[0].grad.w_2 = 10.0 * step;
        profiles.absorb(step, layers);
    }
    QVERIFY(profiles.keptCount() <= normlab::ui::BlockProfiles::kCapacity);
    QCOMPARE(profiles.spacing(), int64_t(4));
    QCOMPARE(profiles.atOrBefore(100).step, int64_t(100));
    QCOMPARE(profiles.atOrBefore(100).blocks[1].resid, 100.0);
    QCOMPARE(profiles.atOrBefore(103).step, int64_t(100));
    QCOMPARE(profiles.atOrBefore(2).step, int64_t(1));  // before the first kept multiple: the first
    QCOMPARE(profiles.atOrBefore(999).step, int64_t(996));
    QCOMPARE(profiles.atOrBefore(5000).step, int64_t(1000));
    QCOMPARE(profiles.first().blocks[0].w_2, 10.0);
    QCOMPARE(profiles.latest().blocks[0].w_2, 10000.0);
    profiles.clear();
    QVERIFY(profiles.empty());
}

void HistoryTest::runHistoryStaysBoundedOverLongRuns() {
    normlab::ui::RunHistory run;
    for (int chunk = 0; chunk < 120; ++chunk) {
        normlab::ui::RunUpdate update;
        for (int i = 1; i <= 1000; ++i) {
            normlab::StepRecord record;
            record.step = chunk * 1000 + i;
            record.loss = 1.0;
            record.layers.resize(6);
            update.records.push_back(record);
            update.events.push_back({record.step, "loss_spike", "spike", "", "", -1});
        }
        run.absorb(update);
    }
    QCOMPARE(*run.loss.lastX(), 120000.0);
    QVERIFY(run.loss.bucketCount() <= 4096);
    QVERIFY(run.updateRatio[5].bucketCount() <= 4096);
    QVERIFY(run.gradHeat.columns().size() <= 1024);
    QVERIFY(run.residHeat.columns().size() <= 1024);
    QCOMPARE(run.events.size(), normlab::ui::RunHistory::kMaxEvents);
    QCOMPARE(run.events.back().step, int64_t(120000));  // the newest are kept
}

void HistoryTest::progressRateIsEachRunsWallClockPace() {
    // Three runs sharing the engine: each gains 1.5 steps a second of wall time, whatever its own step
    // time; the status bar says so, not their sum or one run's compute rate.
    ProgressRate rate;
    for (int tick = 0; tick <= 20; ++tick)
        for (int id = 0; id < 3; ++id) rate.sample(id, tick * 3 + id, tick * 2.0);
    for (int id = 0; id < 3; ++id)
        QVERIFY2(std::abs(rate.stepsPerSecond(id) - 1.5) < 1e-9,
                 qPrintable(QString::number(rate.stepsPerSecond(id))));
    QCOMPARE(speedText({1.5, 1.52, 1.48}), QStringLiteral("3 runs x 1.5 steps/s"));
    QCOMPARE(speedText({2.1, 1.5}), QStringLiteral("2 runs: 2.1, 1.5 steps/s"));
    QCOMPARE(speedText({4.26}), QStringLiteral("4.3 steps/s"));
    // A restart (the step goes back) starts the measurement again; a run standing still goes to 0.
    rate.sample(0, 1, 41.0);
    QCOMPARE(rate.stepsPerSecond(0), 0.0);
    for (int tick = 0; tick <= 40; ++tick) rate.sample(1, 100, 50.0 + tick * 0.1);
    QCOMPARE(rate.stepsPerSecond(1), 0.0);
}

QTEST_APPLESS_MAIN(HistoryTest)
#include "test_history.moc"
