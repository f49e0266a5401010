// The `normlab` executable as scripts use it (offscreen): a scripted run saves a screenshot that is a
// real picture and exits 0; bad options, presets, configs and screenshot paths exit 2 with a message
// before any training; a run that cannot start exits non-zero instead of waiting.
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

class AppCliTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void scriptedScreenshot();
    void badInputExitsTwo_data();
    void badInputExitsTwo();
    void failedStartExitsNonZero();

  private:
    struct Result {
        int exitCode = -1;
        QString output;
    };
    Result run(const QStringList& arguments, int timeoutMs = 120000);
    QTemporaryDir m_dir;
};

void AppCliTest::initTestCase() {
    QVERIFY(QFile::exists(QStringLiteral(NORMLAB_APP_PATH)));
}

AppCliTest::Result AppCliTest::run(const QStringList& arguments, int timeoutMs) {
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
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
    QTest::newRow("unknown lesson") << QStringList{"--lesson", "Nope"} << QStringLiteral("Quickstart");
    QTest::newRow("two sources") << QStringList{"--preset", "periln", "--lesson", "Depth"}
                                 << QStringLiteral("at most one");
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

QTEST_GUILESS_MAIN(AppCliTest)
#include "test_app_cli.moc"
