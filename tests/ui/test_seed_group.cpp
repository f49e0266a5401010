// A seed group folder (train --seeds) opened in the window: one entry whose loss line is the mean of its
// seeds' metrics.jsonl losses at every step, with a band equal to the 95% t interval (or one sd)
// computed here from the same files, in the chart and its CSV; its seeds' own lines on request; its
// caption names the seeds and the band; a seed that diverged is named and left out after its end; the
// difference chart of two groups states the numbers `normlab-cli compare` gives for their folders.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <map>
#include <vector>

#include "app/gui/main_window.h"
#include "engine/analysis/comparison_text.h"
#include "engine/core/atomic_file.h"
#include "engine/io/run_group.h"
#include "tests/ui/ui_test_support.h"
#include "ui/dashboard.h"
#include "ui/panels/chart_panel.h"
#include "ui/panels/difference_panel.h"
#include "ui/panels/run_captions.h"

using normlab::gui::MainWindow;
using normlab::gui::RunFolderOpener;

class SeedGroupTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void groupShowsMeanAndBand();
    void divergedSeedIsNamedAndLeftOut();
    void groupStillTrainingSaysSo();
    void differenceChartComparesGroupsAsTheCliDoes();

  private:
    // A group folder of `seeds` (each config's train.seed set) under m_dir; seeds in `diverging` use a
    // config that diverges.
    QString writeGroup(const QString& name, const std::vector<uint64_t>& seeds,
                       const std::vector<uint64_t>& diverging = {}, double lr = 1e-3);
    // step -> the seeds' losses ("loss" or "val_loss") read back from their metrics.jsonl files
    static std::map<int, std::vector<double>> lossesByStep(const QString& group,
                                                           const std::vector<uint64_t>& seeds,
                                                           const QString& field);
    // Shows `window`, opens `folders` in it and waits until every one is read (the groups built).
    static bool openAndLoad(MainWindow& window, const QStringList& folders);
    // The rows of the loss chart's CSV named `series`: step -> value
    static std::map<int, double> csvSeries(MainWindow& window, const QString& series);
    QTemporaryDir m_dir;
};

void SeedGroupTest::initTestCase() {
    qputenv("NORMLAB_RUNS_DIR", m_dir.filePath(QStringLiteral("runs")).toUtf8());
}

QString SeedGroupTest::writeGroup(const QString& name, const std::vector<uint64_t>& seeds,
                                  const std::vector<uint64_t>& diverging, double lr) {
    const QString group = m_dir.filePath(name);
    normlab::Config config = normlab::test::tinyConfig(24);
    config.telemetry.val_every = 6;
    config.train.lr = lr;
    for (uint64_t seed : seeds) {
        const bool diverges = std::find(diverging.begin(), diverging.end(), seed) != diverging.end();
        normlab::Config own = diverges ? normlab::test::divergingConfig() : config;
        own.train.seed = seed;
        normlab::test::writeRunFolder(
            group + QLatin1Char('/') + QString::fromStdString(normlab::seed_folder_name(seed)), own);
    }
    normlab::write_file_atomically((group + QStringLiteral("/group.json")).toStdString(),
                                   normlab::group_json(config, seeds).dump(2) + "\n");
    return group;
}

std::map<int, std::vector<double>> SeedGroupTest::lossesByStep(const QString& group,
                                                               const std::vector<uint64_t>& seeds,
                                                               const QString& field) {
    std::map<int, std::vector<double>> losses;
    for (uint64_t seed : seeds) {
        QFile metrics(group + QLatin1Char('/') + QString::fromStdString(normlab::seed_folder_name(seed)) +
                      QStringLiteral("/metrics.jsonl"));
        if (!metrics.open(QIODevice::ReadOnly)) return {};
        for (const QByteArray& line : metrics.readAll().split('\n')) {
            const QJsonObject record = QJsonDocument::fromJson(line).object();
            if (record.contains(field) && std::isfinite(record.value(field).toDouble()))
                losses[record.value(QStringLiteral("step")).toInt()].push_back(
                    record.value(field).toDouble());
        }
    }
    return losses;
}

bool SeedGroupTest::openAndLoad(MainWindow& window, const QStringList& folders) {
    window.show();
    if (!window.openRunFolders(folders).isEmpty()) return false;
    auto* opener = window.findChild<RunFolderOpener*>();
    return QTest::qWaitFor([opener] { return opener->loading() == 0; }, 30000);
}

std::map<int, double> SeedGroupTest::csvSeries(MainWindow& window, const QString& series) {
    std::map<int, double> values;
    const QString csv = window.findChild<normlab::ui::Dashboard*>()->panel(QStringLiteral("loss"))->csv();
    for (const QString& row : csv.split('\n', Qt::SkipEmptyParts)) {
        const int last = row.lastIndexOf(','), before = row.lastIndexOf(',', last - 1),
                  axis = row.lastIndexOf(',', before - 1);
        if (row.startsWith('#') || axis < 0 || row.left(axis) != series) continue;
        values[row.mid(before + 1, last - before - 1).toInt()] = row.mid(last + 1).toDouble();
    }
    return values;
}

void SeedGroupTest::groupShowsMeanAndBand() {
    const std::vector<uint64_t> seeds{1, 2, 3};
    const QString group = writeGroup(QStringLiteral("G"), seeds);
    MainWindow window;
    QVERIFY(openAndLoad(window, {group}));
    const normlab::ui::RunHistory* entry = window.store().run(RunFolderOpener::kFirstOpenedId);
    QVERIFY(entry && entry->bands);
    QCOMPARE(entry->bands->members.size(), size_t(3));
    for (int member : entry->bands->members) QVERIFY(!window.store().run(member)->visible);
    QCOMPARE(entry->statusText(), QStringLiteral("3 seeds: 3 completed"));
    QCOMPARE(entry->step, int64_t(24));

    // The mean line and the 95% t band (t_{0.975, 2} = 4.3026527), against the files themselves.
    const auto losses = lossesByStep(group, seeds, QStringLiteral("loss"));
    QCOMPARE(losses.size(), size_t(24));
    const std::map<int, double> mean = csvSeries(window, QStringLiteral("train (mean of 3 seeds)"));
    const std::map<int, double> low = csvSeries(window, QStringLiteral("G: 95% CI over 3 seeds (lower)"));
    const std::map<int, double> high = csvSeries(window, QStringLiteral("G: 95% CI over 3 seeds (upper)"));
    QCOMPARE(mean.size(), size_t(24));
    QCOMPARE(low.size(), size_t(24));
    const auto spread = [](const std::vector<double>& v) {
        const double m = (v[0] + v[1] + v[2]) / 3.0;
        double squares = 0.0;
        for (double x : v) squares += (x - m) * (x - m);
        return std::pair{m, std::sqrt(squares / 2.0)};
    };
    for (const auto& [step, values] : losses) {
        QCOMPARE(values.size(), size_t(3));
        const auto [m, sd] = spread(values);
        QVERIFY(sd > 0.0);  // the seeds do differ
        QVERIFY(std::abs(mean.at(step) - m) < 1e-12 * m);
        QVERIFY(std::abs(low.at(step) - (m - 4.3026527 * sd / std::sqrt(3.0))) < 1e-6 * m);
        QVERIFY(std::abs(high.at(step) - (m + 4.3026527 * sd / std::sqrt(3.0))) < 1e-6 * m);
    }
    // Validation loss has its own band at the steps it was measured.
    const auto validation = lossesByStep(group, seeds, QStringLiteral("val_loss"));
    QCOMPARE(validation.size(), size_t(4));
    const std::map<int, double> valHigh =
        csvSeries(window, QStringLiteral("G validation: 95% CI over 3 seeds (upper)"));
    QCOMPARE(valHigh.size(), size_t(4));
    for (const auto& [step, values] : validation) {
        const auto [m, sd] = spread(values);
        QVERIFY(std::abs(valHigh.at(step) - (m + 4.3026527 * sd / std::sqrt(3.0))) < 1e-6 * m);
    }

    // One sd instead: the band and its name follow.
    window.store().setSpread(normlab::ui::Spread::Sd);
    const std::map<int, double> sdLow = csvSeries(window, QStringLiteral("G: sd over 3 seeds (lower)"));
    QCOMPARE(sdLow.size(), size_t(24));
    for (const auto& [step, values] : losses) {
        const auto [m, sd] = spread(values);
        QVERIFY(std::abs(sdLow.at(step) - (m - sd)) < 1e-9 * m);
    }
    // The caption names the seeds and what the band is; the seeds' own lines on request.
    const QString caption = normlab::ui::captionForRuns(window.store());
    QVERIFY2(caption.contains(QStringLiteral("seeds 1-3")) && caption.contains(QStringLiteral("mean and sd")),
             qPrintable(caption));
    window.store().setSeedsShown(RunFolderOpener::kFirstOpenedId, true);
    for (int member : entry->bands->members) QVERIFY(window.store().run(member)->visible);
    QCOMPARE(csvSeries(window, QStringLiteral("seed-2 train")).size(), size_t(24));
    QVERIFY(!normlab::ui::captionForRuns(window.store()).contains(QStringLiteral("Differs")));
    window.store().setVisible(RunFolderOpener::kFirstOpenedId, false);  // hiding the group hides its seeds
    for (int member : entry->bands->members) QVERIFY(!window.store().run(member)->visible);
}

void SeedGroupTest::divergedSeedIsNamedAndLeftOut() {
    const std::vector<uint64_t> seeds{4, 5, 6};
    const QString group = writeGroup(QStringLiteral("H"), seeds, {6});
    MainWindow window;
    QVERIFY(openAndLoad(window, {group}));
    const normlab::ui::RunHistory* entry = window.store().run(RunFolderOpener::kFirstOpenedId);
    QVERIFY(entry && entry->bands);
    const normlab::ui::RunHistory* diverged = window.store().run(entry->bands->members[2]);
    QCOMPARE(diverged->status, normlab::RunStatus::Diverged);
    QVERIFY2(entry->statusText().startsWith(
                 QStringLiteral("3 seeds: 2 completed, 1 diverged (step %1)").arg(diverged->divergedAt)),
             qPrintable(entry->statusText()));
    QCOMPARE(entry->status, normlab::RunStatus::Completed);
    // The band says over how many seeds: 3 while all logged, 2 after the divergence.
    QVERIFY2(normlab::ui::captionForRuns(window.store()).contains(QStringLiteral("seeds 4-6")),
             qPrintable(normlab::ui::captionForRuns(window.store())));
    QVERIFY(csvSeries(window, QStringLiteral("H: 95% CI over 2-3 seeds (lower)")).size() > 0);
    // After the diverged seed's last finite step the mean is the other two seeds'.
    const auto losses = lossesByStep(group, seeds, QStringLiteral("loss"));
    const std::map<int, double> mean = csvSeries(window, QStringLiteral("train (mean of 3 seeds)"));
    int twoSeedSteps = 0;
    for (const auto& [step, values] : losses) {
        if (values.size() != 2) continue;
        QVERIFY(std::abs(mean.at(step) - (values[0] + values[1]) / 2.0) < 1e-12 * values[0]);
        ++twoSeedSteps;
    }
    QVERIFY(twoSeedSteps > 0);
}

void SeedGroupTest::groupStillTrainingSaysSo() {
    // group.json names seeds 7-9, and only 7 and 8 have folders so far (train --seeds goes in turn).
    const QString group = writeGroup(QStringLiteral("I"), {7, 8});
    normlab::Config config = normlab::test::tinyConfig(24);
    normlab::write_file_atomically((group + QStringLiteral("/group.json")).toStdString(),
                                   normlab::group_json(config, {7, 8, 9}).dump(2) + "\n");
    MainWindow window;
    QVERIFY(openAndLoad(window, {group}));
    const normlab::ui::RunHistory* entry = window.store().run(RunFolderOpener::kFirstOpenedId);
    QVERIFY(entry && entry->bands);
    QCOMPARE(entry->statusText(), QStringLiteral("3 seeds: 2 completed, 1 not started yet"));
    QCOMPARE(entry->status, normlab::RunStatus::Running);
    QCOMPARE(entry->note, QStringLiteral("2 of the group's 3 seeds have a run folder to read"));
}

void SeedGroupTest::differenceChartComparesGroupsAsTheCliDoes() {
    // Two groups on the same seeds: the chart states each group's estimate and the paired B - A, the
    // numbers `normlab-cli compare` computes from the folders (engine/analysis/group_comparison.h).
    const QString a = writeGroup(QStringLiteral("A"), {1, 2, 3}),
                  b = writeGroup(QStringLiteral("B"), {1, 2, 3}, {}, 3e-3);
    MainWindow window;
    QVERIFY(openAndLoad(window, {a, b}));
    auto* panel = qobject_cast<normlab::ui::DifferencePanel*>(
        window.findChild<normlab::ui::Dashboard*>()->panel(QStringLiteral("difference")));
    QVERIFY(panel);
    const int first = RunFolderOpener::kFirstOpenedId, second = first + 4;  // a group, then its 3 seeds
    QVERIFY(window.store().run(second) && window.store().run(second)->bands);
    panel->showPair(first, second);
    panel->findChild<QComboBox*>(QStringLiteral("differenceQuantity"))->setCurrentIndex(1);  // validation
    const QString note = panel->buildContent(0).note;
    const normlab::MetricSpec spec = normlab::parse_metric_spec("final_val_loss");
    const normlab::GroupSummary groupA = normlab::summarize_group(a.toStdString(), spec);
    const normlab::GroupSummary groupB = normlab::summarize_group(b.toStdString(), spec);
    QCOMPARE(groupA.estimate.n, size_t(3));
    const QString difference = QString::fromStdString(
        normlab::difference_line(groupA, groupB, normlab::compare_groups(groupA, groupB)));
    QVERIFY2(difference.startsWith(QStringLiteral("B - A, paired by seed")), qPrintable(difference));
    QVERIFY2(note.contains(difference), qPrintable(note + QStringLiteral("\n---\n") + difference));
    for (const auto* group : {&groupA, &groupB})
        QVERIFY2(note.contains(QString::fromStdString(normlab::estimate_line(group->estimate, false))),
                 qPrintable(note));
    // The chart's CSV carries the same lines.
    QVERIFY(panel->csv().contains(QStringLiteral("# ") + difference));
}

QTEST_MAIN(SeedGroupTest)
#include "test_seed_group.moc"
