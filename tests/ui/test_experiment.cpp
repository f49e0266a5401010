// Experiment files: a save/load round trip keeps every run's config, seed, name and visibility and the
// layout; corrupt, foreign or invalid files give a message naming the problem (no crash), and the
// window keeps its state when asked to open one.
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/main_window.h"
#include "app/gui/run_folder_opener.h"
#include "engine/config/presets.h"
#include "engine/core/errors.h"
#include "tests/ui/ui_test_support.h"
#include "ui/controls/config_panel.h"
#include "ui/controls/lessons.h"
#include "ui/controls/runs_panel.h"
#include "ui/dashboard.h"
#include "ui/experiment/experiment_file.h"
#include "ui/panels/line_panel.h"

using namespace normlab::ui;

class ExperimentTest : public QObject {
    Q_OBJECT
  private slots:
    void roundTrip();
    void corruptFilesGiveMessages_data();
    void corruptFilesGiveMessages();
    void windowRoundTripAndCorruptFile();
    void savedRunReplaysWithItsLiveChanges();
    void seedGroupsOfALessonReopenAsGroups();
    void lessonStartsAnUntitledExperimentWithoutNotes();
    void savingOverAFileKeepsABackup();

  private:
    QTemporaryDir m_dir;
};

void ExperimentTest::roundTrip() {
    Experiment experiment;
    experiment.current = normlab::preset_config("deep-deepnorm");
    experiment.current.train.seed = 77;
    experiment.runs.push_back({QStringLiteral("post, no warmup"),
                               normlab::preset_config("postln-no-warmup"),
                               true,
                               {{"model.norm_placement", "pre", 100}},
                               QStringLiteral("/runs/post")});
    experiment.runs.push_back(
        {QStringLiteral("pre"), normlab::preset_config("preln-no-warmup"), false, {}, {}});
    experiment.runs[1].config.train.seed = 123;
    experiment.runs[1].group = QStringLiteral("preln-no-warmup");  // a seed group's run
    experiment.runs[0].fork = true;                                // forks are marked, whatever their name
    experiment.activeRun = 1;
    experiment.dashboardLayout = QByteArray("\x00\x01layout\xff", 9);
    experiment.annotations[QStringLiteral("loss")] = {
        {120.0, 3.05, QStringLiteral("the stall")},
        {300.0, 1.8, QStringLiteral("switched to Pre-LN, \"recovers\"")}};
    const QString path = m_dir.filePath(QStringLiteral("round.json"));
    QCOMPARE(saveExperiment(experiment, path), QString());
    const Experiment loaded = loadExperiment(path);
    QCOMPARE(normlab::config_to_json_text(loaded.current), normlab::config_to_json_text(experiment.current));
    QCOMPARE(loaded.runs.size(), size_t(2));
    for (size_t i = 0; i < 2; ++i) {
        QCOMPARE(loaded.runs[i].name, experiment.runs[i].name);
        QCOMPARE(loaded.runs[i].visible, experiment.runs[i].visible);
        QCOMPARE(loaded.runs[i].changes, experiment.runs[i].changes);
        QCOMPARE(loaded.runs[i].folder, experiment.runs[i].folder);
        QCOMPARE(loaded.runs[i].group, experiment.runs[i].group);
        QCOMPARE(loaded.runs[i].fork, experiment.runs[i].fork);
        QCOMPARE(normlab::config_to_json_text(loaded.runs[i].config),
                 normlab::config_to_json_text(experiment.runs[i].config));
    }
    QCOMPARE(loaded.runs[1].config.train.seed, uint64_t(123));
    QCOMPARE(loaded.activeRun, 1);
    QCOMPARE(loaded.dashboardLayout, experiment.dashboardLayout);
    QCOMPARE(loaded.annotations, experiment.annotations);
    // A file saved before forks were marked: a run named as forks were is taken for one.
    const Experiment older = experimentFromJson(
        "{\"normlab_experiment\": 1, \"runs\": [{\"name\": \"pre / fork@40\", \"config\": {}}, "
        "{\"name\": \"pre\", \"config\": {}}]}",
        QStringLiteral("older.json"));
    QVERIFY(older.runs[0].fork);
    QVERIFY(!older.runs[1].fork);
}

void ExperimentTest::corruptFilesGiveMessages_data() {
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not json") << QByteArray("{\"normlab_experiment\": 1, \"runs\": [")
                              << QStringLiteral("invalid JSON");
    QTest::newRow("binary") << QByteArray("\x89PNG\r\n\x1a\n\x00\x00", 10) << QStringLiteral("invalid JSON");
    QTest::newRow("foreign json") << QByteArray("{\"hello\": 1}")
                                  << QStringLiteral("not a NormLab experiment file");
    QTest::newRow("newer format") << QByteArray("{\"normlab_experiment\": 99}")
                                  << QStringLiteral("newer NormLab");
    QTest::newRow("runs not a list") << QByteArray("{\"normlab_experiment\": 1, \"runs\": 3}")
                                     << QStringLiteral("must be a list");
    QTest::newRow("run without config")
        << QByteArray("{\"normlab_experiment\": 1, \"runs\": [{\"name\": \"a\"}]}")
        << QStringLiteral("runs[0] needs");
    QTest::newRow("unknown key")
        << QByteArray("{\"normlab_experiment\": 1, \"config\": {\"model\": {\"layerz\": 3}}}")
        << QStringLiteral("model.layerz");
    QTest::newRow("non-live change")
        << QByteArray(
               "{\"normlab_experiment\": 1, \"runs\": [{\"name\": \"a\", \"config\": {}, \"changes\": "
               "[{\"step\": 5, \"key\": \"model.layers\", \"value\": \"3\"}]}]}")
        << QStringLiteral("'model.layers' cannot change during a run");
    QTest::newRow("group not text")
        << QByteArray(
               "{\"normlab_experiment\": 1, \"runs\": [{\"name\": \"a\", \"config\": {}, \"group\": 2}]}")
        << QStringLiteral("\"group\" must be text");
    QTest::newRow("fork not a flag")
        << QByteArray(
               "{\"normlab_experiment\": 1, \"runs\": [{\"name\": \"a\", \"config\": {}, \"fork\": 1}]}")
        << QStringLiteral("\"fork\" must be true or false");
    QTest::newRow("bad annotation")
        << QByteArray("{\"normlab_experiment\": 1, \"annotations\": {\"loss\": [{\"step\": \"x\"}]}}")
        << QStringLiteral("\"annotations\" must map chart ids");
    QTest::newRow("invalid combination") << QByteArray(
                                                "{\"normlab_experiment\": 1, \"runs\": [{\"name\": \"a\", "
                                                "\"config\": {\"model\": {\"d_model\": 64, \"heads\": 5}}}]}")
                                         << QStringLiteral("heads");
}

void ExperimentTest::corruptFilesGiveMessages() {
    QFETCH(QByteArray, content);
    QFETCH(QString, expected);
    const QString path = m_dir.filePath(QStringLiteral("bad.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(content);
    file.close();
    try {
        loadExperiment(path);
        QFAIL("a corrupt experiment loaded");
    } catch (const normlab::InputError& error) {
        const QString message = QString::fromUtf8(error.what());
        QVERIFY2(message.contains(expected), qPrintable(message));
        QVERIFY2(message.contains(path), qPrintable(message));
    }
    try {
        loadExperiment(m_dir.filePath(QStringLiteral("missing.json")));
        QFAIL("a missing file loaded");
    } catch (const normlab::InputError& error) {
        QVERIFY(QString::fromUtf8(error.what()).contains(QStringLiteral("does not exist")));
    }
}

void ExperimentTest::windowRoundTripAndCorruptFile() {
    qputenv("NORMLAB_RUNS_DIR", m_dir.filePath(QStringLiteral("runs")).toUtf8());
    normlab::gui::MainWindow window;
    window.loadConfig(normlab::preset_config("periln"), QStringLiteral("periln"));
    const QString path = m_dir.filePath(QStringLiteral("window.json"));
    QCOMPARE(window.saveExperimentTo(path), QString());

    normlab::gui::MainWindow other;
    QCOMPARE(other.openExperiment(path), QString());
    QCOMPARE(other.store().runs().size(), size_t(1));
    QCOMPARE(other.store().runs().begin()->second.name, QStringLiteral("periln"));
    QCOMPARE(other.configPanel().config().model.norm_placement, normlab::NormPlacement::Peri);

    const QString corrupt = m_dir.filePath(QStringLiteral("corrupt.json"));
    QFile file(corrupt);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{\"normlab_experiment\": 1, \"config\": {\"train\": {\"lr\": \"fast\"}}}");
    file.close();
    const QString error = other.openExperiment(corrupt);
    QVERIFY2(error.contains(QStringLiteral("train.lr")), qPrintable(error));
    // Nothing changed in the window.
    QCOMPARE(other.store().runs().begin()->second.name, QStringLiteral("periln"));
    QCOMPARE(other.configPanel().config().model.norm_placement, normlab::NormPlacement::Peri);
}

namespace {
std::vector<double> lossesIn(const QString& folder) {
    std::vector<double> losses;
    QFile metrics(folder + QStringLiteral("/metrics.jsonl"));
    if (!metrics.open(QIODevice::ReadOnly)) return losses;
    for (const QByteArray& line : metrics.readAll().split('\n'))
        if (!line.isEmpty())
            losses.push_back(QJsonDocument::fromJson(line).object().value(QStringLiteral("loss")).toDouble());
    return losses;
}
}  // namespace

void ExperimentTest::savedRunReplaysWithItsLiveChanges() {
    // A run switched from Post-LN to Pre-LN mid-run, saved, reopened and started again: the saved
    // experiment holds the start config and the change at its step, reopening shows the saved curves,
    // and the replay's losses equal the original's step for step.
    qputenv("NORMLAB_RUNS_DIR", m_dir.filePath(QStringLiteral("replay-runs")).toUtf8());
    const QString path = m_dir.filePath(QStringLiteral("replay.json"));
    QString originalFolder;
    int64_t switchedAt = 0;
    {
        normlab::gui::MainWindow window;
        normlab::Config config = normlab::test::tinyConfig(60);
        config.model.norm_placement = normlab::NormPlacement::Post;
        window.loadConfig(config, QStringLiteral("switched"));
        window.show();
        // Slow enough (50 steps/s) that the switch lands mid-run.
        auto* speed = window.findChild<QComboBox*>(QStringLiteral("speedLimit"));
        speed->setCurrentIndex(speed->findData(50.0));
        QCOMPARE(window.startRuns(), QString());
        QVERIFY(QTest::qWaitFor([&] { return window.store().run(0)->step >= 5; }, 30000));
        auto* placement = window.configPanel().findChild<QComboBox*>(QStringLiteral("model.norm_placement"));
        placement->setCurrentIndex(placement->findData(QStringLiteral("pre")));
        QVERIFY(QTest::qWaitFor([&] { return window.workerState() == normlab::gui::WorkerState::Finished; },
                                60000));
        for (const normlab::Event& event : window.store().run(0)->events)
            if (event.kind == "change") switchedAt = event.step;
        QVERIFY(switchedAt > 5);
        originalFolder = window.store().run(0)->folder;
        QCOMPARE(window.saveExperimentTo(path), QString());
    }
    const Experiment saved = loadExperiment(path);
    QCOMPARE(saved.runs.size(), size_t(1));
    QCOMPARE(saved.runs[0].config.model.norm_placement, normlab::NormPlacement::Post);
    QCOMPARE(saved.runs[0].changes,
             (std::vector<normlab::LiveChange>{{"model.norm_placement", "pre", switchedAt}}));
    QCOMPARE(saved.runs[0].folder, originalFolder);

    normlab::gui::MainWindow reopened;
    reopened.show();
    auto* opener = reopened.findChild<normlab::gui::RunFolderOpener*>();
    // Reopened (twice), the run shows once, under its saved name and colour, with its curves and its
    // live-change marker.
    for (int time = 0; time < 2; ++time) {
        QCOMPARE(reopened.openExperiment(path), QString());
        QVERIFY(QTest::qWaitFor([&] { return opener->loading() == 0; }, 30000));
        QCOMPARE(reopened.store().runs().size(), size_t(1));
        const normlab::ui::RunHistory* shown = reopened.store().run(0);
        QVERIFY(shown);
        QCOMPARE(shown->name, saved.runs[0].name);  // as saved ("switched (changed)")
        QCOMPARE(shown->colour, normlab::ui::TelemetryStore::paletteColour(0));
        QCOMPARE(shown->step, int64_t(60));
        QVERIFY(std::any_of(shown->events.begin(), shown->events.end(), [&](const normlab::Event& event) {
            return event.kind == "change" && event.step == switchedAt;
        }));
    }
    QCOMPARE(reopened.startRuns(), QString());
    QVERIFY(QTest::qWaitFor([&] { return reopened.workerState() == normlab::gui::WorkerState::Finished; },
                            60000));
    QVERIFY(reopened.store().run(0)->visible);
    const std::vector<double> original = lossesIn(originalFolder),
                              replay = lossesIn(reopened.store().run(0)->folder);
    QCOMPARE(replay.size(), size_t(60));
    QCOMPARE(replay, original);
}

// A lesson over 2 seeds, one group hidden, saved and reopened: the same groups come back, each its
// mean and band over its saved runs' curves, the hidden one hidden, the seeds never as runs of their own.
void ExperimentTest::seedGroupsOfALessonReopenAsGroups() {
    qputenv("NORMLAB_RUNS_DIR", m_dir.filePath(QStringLiteral("group-runs")).toUtf8());
    const QString path = m_dir.filePath(QStringLiteral("groups.json"));
    const Lesson& lesson = lessons().front();
    std::vector<QString> names;
    {
        normlab::gui::MainWindow window;
        window.show();
        window.startLesson(lesson, 2);
        QVERIFY(QTest::qWaitFor([&] { return window.store().run(0)->step >= 5; }, 60000));
        normlab::test::actionNamed(window, QStringLiteral("Stop"))->trigger();
        QVERIFY(QTest::qWaitFor([&] { return window.workerState() == normlab::gui::WorkerState::Finished; },
                                30000));
        for (const auto& [id, run] : window.store().runs())
            if (run.bands) names.push_back(run.name);
        window.store().setVisible(normlab::gui::MainWindow::kFirstLiveGroupId + 1, false);
        // The controls edit the third group (Pre-LN): they do so again when reopened.
        const normlab::ui::RunHistory* third =
            window.store().run(normlab::gui::MainWindow::kFirstLiveGroupId + 2);
        QVERIFY(third && third->bands);
        QMetaObject::invokeMethod(window.findChild<normlab::ui::RunsPanel*>(), "runSelected",
                                  Q_ARG(int, third->id));
        QCOMPARE(window.saveExperimentTo(path), QString());
    }
    QCOMPARE(names.size(), size_t(lesson.presets.size()));
    normlab::gui::MainWindow reopened;
    reopened.show();
    QCOMPARE(reopened.openExperiment(path), QString());
    auto* opener = reopened.findChild<normlab::gui::RunFolderOpener*>();
    QVERIFY(QTest::qWaitFor([&] { return opener->loading() == 0; }, 30000));
    reopened.store().rebuildGroups();
    std::vector<QString> shown;
    for (const auto& [id, run] : reopened.store().runs()) {
        if (!run.bands) {
            QVERIFY2(run.groupId >= 0 && !run.visible, qPrintable(run.name));  // every run is a group's seed
            continue;
        }
        shown.push_back(run.name);
        QCOMPARE(run.bands->members.size(), size_t(2));
        QVERIFY2(run.loss.lastValue().has_value(), qPrintable(run.name));  // the mean of the saved curves
        QVERIFY(run.bands->lossLow.lastValue() && run.bands->lossHigh.lastValue());
        QCOMPARE(run.visible, id != normlab::gui::MainWindow::kFirstLiveGroupId + 1);
    }
    QCOMPARE(shown, names);
    auto* controls = reopened.findChild<QDockWidget*>(QStringLiteral("controlsDock"));
    QCOMPARE(controls->windowTitle(), QStringLiteral("Controls: editing %1 (2 seeds)").arg(names[2]));
    QCOMPARE(reopened.configPanel().config().model.norm_placement, normlab::NormPlacement::Pre);
}

void ExperimentTest::lessonStartsAnUntitledExperimentWithoutNotes() {
    // A note on lesson 1's loss chart, saved as its file; the next lesson is a new, untitled experiment
    // without that note, so neither its charts nor a Save of it touch lesson 1's file.
    qputenv("NORMLAB_RUNS_DIR", m_dir.filePath(QStringLiteral("lesson-runs")).toUtf8());
    normlab::gui::MainWindow window;
    const std::vector<Lesson>& all = lessons();
    window.loadConfig(normlab::test::tinyConfig(5), QStringLiteral("first"));
    auto* loss = qobject_cast<LinePanel*>(window.dashboard().panel(QStringLiteral("loss")));
    QVERIFY(loss);
    loss->setAnnotations({{10.0, 3.0, QStringLiteral("the stall")}});
    const QString path = m_dir.filePath(QStringLiteral("warmup-demo.json"));
    QCOMPARE(window.saveExperimentTo(path), QString());
    QCOMPARE(window.document().path(), path);
    QVERIFY(window.windowTitle().contains(QStringLiteral("warmup-demo.json")));
    const Experiment first = loadExperiment(path);
    QCOMPARE(first.annotations.at(QStringLiteral("loss")).size(), size_t(1));

    window.setScripted(true);  // no lesson pause, no dialogs
    window.startLesson(all.back());
    QVERIFY(window.document().path().isEmpty());
    QVERIFY2(window.windowTitle().contains(QStringLiteral("untitled")), qPrintable(window.windowTitle()));
    for (ChartPanel* panel : window.dashboard().panels())
        if (auto* line = qobject_cast<LinePanel*>(panel))
            QVERIFY2(line->annotations().empty(), qPrintable(line->id()));
    QCOMPARE(loadExperiment(path).runs.front().name, QStringLiteral("first"));
    const QString second = m_dir.filePath(QStringLiteral("second.json"));
    QCOMPARE(window.saveExperimentTo(second), QString());
    QVERIFY(loadExperiment(second).annotations.empty());
}

void ExperimentTest::savingOverAFileKeepsABackup() {
    qputenv("NORMLAB_RUNS_DIR", m_dir.filePath(QStringLiteral("backup-runs")).toUtf8());
    normlab::gui::MainWindow window;
    window.loadConfig(normlab::preset_config("periln"), QStringLiteral("periln"));
    const QString path = m_dir.filePath(QStringLiteral("replaced.json"));
    QCOMPARE(window.saveExperimentTo(path), QString());
    QFile saved(path);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    const QByteArray before = saved.readAll();
    saved.close();
    window.loadConfig(normlab::preset_config("quickstart"), QStringLiteral("quickstart"));
    QCOMPARE(window.saveExperimentTo(path), QString());
    QCOMPARE(loadExperiment(path).runs.front().name, QStringLiteral("quickstart"));
    QFile backup(normlab::gui::ExperimentDocument::backupPath(path));
    QVERIFY(backup.open(QIODevice::ReadOnly));
    QCOMPARE(backup.readAll(), before);
}

QTEST_MAIN(ExperimentTest)
#include "test_experiment.moc"
