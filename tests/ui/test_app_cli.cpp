// The `normlab` executable as scripts use it (offscreen): a scripted run saves a screenshot that is a
// real picture and exits 0; bad options, presets, configs and screenshot paths exit 2 with a message
// before any training; a run that cannot start exits non-zero instead of waiting.
#include <QElapsedTimer>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "engine/sweep/sweep_folder.h"
#include "engine/sweep/sweep_plan.h"
#include "tests/ui/ui_test_support.h"

class AppCliTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void scriptedScreenshot();
    void badInputExitsTwo_data();
    void badInputExitsTwo();
    void failedStartExitsNonZero();
    void divergingRunNeverFreezesTheWindow();
    void helpAndVersionNeedNoDisplay();
    void openedRunsScreenshot();
    void replayedRunsScreenshot();
    void experimentLifecycle();

  private:
    struct Result {
        int exitCode = -1;
        QString output;
    };
    Result run(const QStringList& arguments, int timeoutMs = 120000, bool display = true);
    QTemporaryDir m_dir;
};

void AppCliTest::initTestCase() {
    QVERIFY(QFile::exists(QStringLiteral(NORMLAB_APP_PATH)));
}

AppCliTest::Result AppCliTest::run(const QStringList& arguments, int timeoutMs, bool display) {
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    if (display) {
        environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    } else {
        for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
            environment.remove(QString::fromLatin1(name));
    }
    environment.insert(QStringLiteral("NORMLAB_RUNS_DIR"), m_dir.filePath(QStringLiteral("runs")));
    environment.insert(QStringLiteral("OMP_NUM_THREADS"), QStringLiteral("1"));
    process.setProcessEnvironment(environment);
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(QStringLiteral(NORMLAB_APP_PATH), arguments);
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        return {-1, QStringLiteral("timed out: ") + QString::fromUtf8(process.readAll())};
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            QString::fromUtf8(process.readAll())};
}

void AppCliTest::scriptedScreenshot() {
    const QString shot = m_dir.filePath(QStringLiteral("shot.png"));
    const Result result = run({"--preset", "quickstart", "--set", "model.layers=2", "--set", "threads=1",
                               "--quit-after-steps", "30", "--screenshot", shot, "--size", "1400x900"});
    QVERIFY2(result.exitCode == 0, qPrintable(result.output));
    QVERIFY2(result.output.contains(QStringLiteral("screenshot saved")), qPrintable(result.output));
    const QImage image(shot);
    QCOMPARE(image.size(), QSize(1400, 900));
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 6)
        for (int x = 0; x < image.width(); x += 6) colours.insert(image.pixel(x, y));
    QVERIFY(colours.size() > 50);
    // It trained: the run folder has its metrics.
    const QStringList runs =
        QDir(m_dir.filePath(QStringLiteral("runs"))).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QCOMPARE(runs.size(), 1);
    QFile metrics(m_dir.filePath(QStringLiteral("runs/") + runs.front() + QStringLiteral("/metrics.jsonl")));
    QVERIFY(metrics.open(QIODevice::ReadOnly));
    QVERIFY(metrics.readAll().count('\n') >= 30);
}

void AppCliTest::badInputExitsTwo_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown option") << QStringList{"--frobnicate"}
                                    << QStringLiteral("unknown option '--frobnicate'");
    QTest::newRow("unknown preset") << QStringList{"--preset", "nosuch"} << QStringLiteral("quickstart");
    QTest::newRow("missing config") << QStringList{"--config", "/nonexistent/c.json"}
                                    << QStringLiteral("does not exist");
    QTest::newRow("bad set") << QStringList{"--set", "model.layerz=3"} << QStringLiteral("model.layers");
    QTest::newRow("invalid combination") << QStringList{"--set", "model.heads=5"} << QStringLiteral("heads");
    QTest::newRow("screenshot folder missing")
        << QStringList{"--quit-after-steps", "5", "--screenshot", "/nonexistent/dir/x.png"}
        << QStringLiteral("does not exist");
    QTest::newRow("screenshot without quit")
        << QStringList{"--screenshot", "x.png"} << QStringLiteral("--quit-after-steps");
    QTest::newRow("bad size") << QStringList{"--size", "huge"} << QStringLiteral("WIDTHxHEIGHT");
    QTest::newRow("zero steps") << QStringList{"--quit-after-steps", "0"} << QStringLiteral(">= 1");
    QTest::newRow("save experiment without quit")
        << QStringList{"--save-experiment", "x.json"} << QStringLiteral("--quit-after-steps");
    QTest::newRow("label without export")
        << QStringList{"--label", "a=b"} << QStringLiteral("needs --export FILE");
    QTest::newRow("unknown export preset")
        << QStringList{"--open", ".", "--export", "x.png", "--chart", "loss", "--export-preset", "poster"}
        << QStringLiteral("presets: slide");
    QTest::newRow("unknown lesson") << QStringList{"--lesson", "Nope"} << QStringLiteral("Quickstart");
    QTest::newRow("zero lesson seeds") << QStringList{"--lesson", "Depth", "--lesson-seeds", "0"}
                                       << QStringLiteral("--lesson-seeds needs a whole number from 1 to 10");
    QTest::newRow("lesson seeds without a lesson")
        << QStringList{"--preset", "periln", "--lesson-seeds", "3"} << QStringLiteral("needs --lesson TITLE");
    QTest::newRow("two sources") << QStringList{"--preset", "periln", "--lesson", "Depth"}
                                 << QStringLiteral("at most one");
    QTest::newRow("set with a lesson") << QStringList{"--lesson", "Depth", "--set", "train.lr=1e-2"}
                                       << QStringLiteral("does not combine with --lesson");
    QTest::newRow("replay with open")
        << QStringList{"--replay", ".", "--open", "."} << QStringLiteral("does not combine with --open");
    QTest::newRow("bad replay speed")
        << QStringList{"--replay", ".", "--replay-speed", "0"} << QStringLiteral("--replay-speed");
    QTest::newRow("unknown stage chart")
        << QStringList{"--stage", "loss,nope"} << QStringLiteral("no chart 'nope'");
    QTest::newRow("three stage charts")
        << QStringList{"--stage", "loss,attention,difference"} << QStringLiteral("one or two chart ids");
    QTest::newRow("bad steps range") << QStringList{"--open", ".", "--steps", "9:4"}
                                     << QStringLiteral("FIRST:LAST");
}

void AppCliTest::badInputExitsTwo() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, expected);
    const Result result = run(arguments, 30000);
    QVERIFY2(result.exitCode == 2, qPrintable(QString::number(result.exitCode) + ": " + result.output));
    QVERIFY2(result.output.contains(expected), qPrintable(result.output));
}

void AppCliTest::failedStartExitsNonZero() {
    // A text file that is not there: the engine refuses it when the run starts.
    const Result result = run({"--set", "data.text_path=" + m_dir.filePath(QStringLiteral("missing.txt")),
                               "--quit-after-steps", "5"},
                              60000);
    QVERIFY2(result.exitCode != 0 && result.exitCode != -1,
             qPrintable(QString::number(result.exitCode) + ": " + result.output));
    QVERIFY2(result.output.contains(QStringLiteral("missing.txt")), qPrintable(result.output));
}

void AppCliTest::divergingRunNeverFreezesTheWindow() {
    // Post-LN at lr 1000: losses and norms over dozens of decades, then NaN. The charts used to spend
    // minutes building log-axis minor ticks here; the window must keep up and exit at once.
    const QString shot = m_dir.filePath(QStringLiteral("diverged.png"));
    QElapsedTimer timer;
    timer.start();
    const Result result = run({"--preset", "postln-no-warmup", "--set", "train.lr=1000", "--quit-after-steps",
                               "100", "--screenshot", shot},
                              60000);
    QVERIFY2(result.exitCode == 0, qPrintable(result.output));
    QVERIFY2(result.output.contains(QStringLiteral("diverged")), qPrintable(result.output));
    QVERIFY(QImage(shot).width() > 0);
    qInfo("diverging run: window exited after %lld ms", static_cast<long long>(timer.elapsed()));
}

void AppCliTest::helpAndVersionNeedNoDisplay() {
    const Result help = run({"--help"}, 30000, false);
    QVERIFY2(help.exitCode == 0 && help.output.contains(QStringLiteral("usage: normlab")),
             qPrintable(help.output));
    const Result version = run({"--version"}, 30000, false);
    QVERIFY2(version.exitCode == 0, qPrintable(version.output));
    QVERIFY2(version.output.contains(QStringLiteral("NormLab 0.")) &&
                 version.output.contains(QStringLiteral("commit ")),
             qPrintable(version.output));
    const Result bad = run({"--frobnicate"}, 30000, false);
    QVERIFY2(bad.exitCode == 2 && bad.output.contains(QStringLiteral("unknown option")),
             qPrintable(bad.output));
}

void AppCliTest::replayedRunsScreenshot() {
    // A recorded run replayed to step 12 and saved as a screenshot: exit 0, nothing trains; a folder
    // that is not there exits 2 naming it.
    const QString folder = m_dir.filePath(QStringLiteral("recorded/run-a"));
    normlab::test::writeRunFolder(folder, normlab::test::tinyConfig(30));
    const QString shot = m_dir.filePath(QStringLiteral("replayed.png"));
    const Result result = run({"--replay", m_dir.filePath(QStringLiteral("recorded")), "--replay-speed",
                               "200", "--quit-after-steps", "12", "--screenshot", shot},
                              60000);
    QVERIFY2(result.exitCode == 0 && result.output.contains(QStringLiteral("run-a: step 12 (target 12)")),
             qPrintable(result.output));
    QCOMPARE(QImage(shot).size(), QSize(1680, 1020));
    const Result missing = run({"--replay", m_dir.filePath(QStringLiteral("nothing-here")),
                                "--quit-after-steps", "3", "--screenshot", shot});
    QVERIFY2(missing.exitCode == 2 && missing.output.contains(QStringLiteral("nothing-here")),
             qPrintable(missing.output));
}

void AppCliTest::openedRunsScreenshot() {
    // A CLI-style run folder opened and saved as a screenshot: nothing trains, exit 0 once it is read.
    const QString folder = m_dir.filePath(QStringLiteral("opened/run-a"));
    normlab::test::writeRunFolder(folder, normlab::test::tinyConfig(30));
    const QString shot = m_dir.filePath(QStringLiteral("opened.png"));
    const Result result =
        run({"--open", m_dir.filePath(QStringLiteral("opened")), "--screenshot", shot}, 60000);
    QVERIFY2(result.exitCode == 0, qPrintable(result.output));
    QCOMPARE(QImage(shot).size(), QSize(1680, 1020));
    // Without a display (and no platform chosen) a screenshot is drawn offscreen, not a Qt abort.
    const Result headless =
        run({"--open", m_dir.filePath(QStringLiteral("opened")), "--screenshot", shot}, 60000, false);
    QVERIFY2(headless.exitCode == 0 && headless.output.contains(QStringLiteral("screenshot saved")),
             qPrintable(headless.output));
    const Result missing =
        run({"--open", m_dir.filePath(QStringLiteral("nothing-here")), "--screenshot", shot});
    QVERIFY2(missing.exitCode == 2 && missing.output.contains(QStringLiteral("does not exist")),
             qPrintable(missing.output));
    // A sweep folder's screenshot is its stability map, at the size asked for.
    const QString sweep = m_dir.filePath(QStringLiteral("sweep"));
    normlab::write_sweep(sweep.toStdString(),
                         normlab::plan_sweep(normlab::sweep_spec_from_json(nlohmann::ordered_json::parse(
                             R"({"base": {"preset": "quickstart"},
                                                      "axes": {"train.lr": [0.001, 0.01]}, "steps": 10})"))));
    const Result map = run({"--open", sweep, "--screenshot", shot, "--size", "1800x900"}, 60000);
    QVERIFY2(map.exitCode == 0, qPrintable(map.output));
    QCOMPARE(QImage(shot).size(), QSize(1800, 900));
}

void AppCliTest::experimentLifecycle() {
    // A lesson trained, saved and quit; reopened, its screenshot is taken once every run's curves are
    // read; a run whose folder is gone makes it exit 2 naming the run.
    const QString saved = m_dir.filePath(QStringLiteral("lesson.json"));
    const Result trained =
        run({"--lesson", "Post-LN", "--quit-after-steps", "15", "--save-experiment", saved});
    QVERIFY2(trained.exitCode == 0 && trained.output.contains(QStringLiteral("experiment saved")),
             qPrintable(trained.output));
    QFile file(saved);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonArray runs =
        QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("runs")).toArray();
    QCOMPARE(runs.size(), 3);
    const QString shot = m_dir.filePath(QStringLiteral("reopened.png"));
    const Result reopened = run({"--experiment", saved, "--screenshot", shot}, 60000);
    QVERIFY2(reopened.exitCode == 0 && reopened.output.contains(QStringLiteral("screenshot saved")),
             qPrintable(reopened.output));
    QCOMPARE(QImage(shot).size(), QSize(1680, 1020));

    const QString gone = runs.at(1).toObject().value(QStringLiteral("folder")).toString();
    QVERIFY(!gone.isEmpty() && QDir(gone).removeRecursively());
    const Result missing = run({"--experiment", saved, "--screenshot", shot}, 60000);
    const QString name = runs.at(1).toObject().value(QStringLiteral("name")).toString();
    QVERIFY2(missing.exitCode == 2 && missing.output.contains(name) && missing.output.contains(gone),
             qPrintable(missing.output));
}

QTEST_GUILESS_MAIN(AppCliTest)
#include "test_app_cli.moc"
