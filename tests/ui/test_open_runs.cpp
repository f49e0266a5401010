// Run folders opened in the window: a run written by the CLI's writer joins the charts as an opened
// run (its status, steps and colour) and its loss chart's CSV holds exactly metrics.jsonl's values;
// a folder that is not a run is refused by name while the others open; opened runs stay when other
// runs are loaded, and Close opened runs removes them; a run written while watched shows every step,
// goes stale when its writer is quiet, and ends when its summary does; a folder the PyTorch bridge
// wrote (tests/data/bridge-run) shows its writer and its per-block and attention charts.
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeData>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <cmath>
#include <map>

#include "app/gui/main_window.h"
#include "engine/io/records_json.h"
#include "engine/io/run_folder.h"
#include "engine/train/trainer.h"
#include "tests/ui/ui_test_support.h"
#include "ui/dashboard.h"
#include "ui/panels/block_profile_panel.h"
#include "ui/panels/chart_panel.h"

using normlab::gui::MainWindow;
using normlab::gui::RunFolderOpener;

class OpenRunsTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void cliRunOpensWithItsExactValues();
    void nonRunFolderIsRefusedByName();
    void runWrittenWhileWatchedShowsEveryStep();
    void fileWatchDeliversWithoutThePoll();
    void droppedFolderOpens();
    void bridgeRunShowsPerBlockCharts();

  private:
    static bool waitLoaded(MainWindow& window);
    // Opens `folder` in `window` (shown) and waits until it is read; the opened run, or null.
    static const normlab::ui::RunHistory* openAndLoad(MainWindow& window, const QString& folder);
    QTemporaryDir m_dir;
};

void OpenRunsTest::initTestCase() {
    qputenv("NORMLAB_RUNS_DIR", m_dir.filePath(QStringLiteral("runs")).toUtf8());
}

bool OpenRunsTest::waitLoaded(MainWindow& window) {
    auto* opener = window.findChild<RunFolderOpener*>();
    return QTest::qWaitFor([opener] { return opener->loading() == 0; }, 30000);
}

const normlab::ui::RunHistory* OpenRunsTest::openAndLoad(MainWindow& window, const QString& folder) {
    window.show();
    if (!window.openRunFolders({folder}).isEmpty() || !waitLoaded(window)) return nullptr;
    return window.store().run(RunFolderOpener::kFirstOpenedId);
}

void OpenRunsTest::cliRunOpensWithItsExactValues() {
    const QString folder = m_dir.filePath(QStringLiteral("cli-run"));
    normlab::test::writeRunFolder(folder, normlab::test::tinyConfig(40));
    MainWindow window;
    const normlab::ui::RunHistory* opened = openAndLoad(window, folder);
    QVERIFY(opened);
    QCOMPARE(opened->step, int64_t(40));
    QCOMPARE(opened->status, normlab::RunStatus::Completed);
    QCOMPARE(opened->statusText(), QStringLiteral("opened, completed"));
    QVERIFY(!window.store().run(0)->visible);  // the not-started placeholder steps aside
    QVERIFY(opened->colour != window.store().run(0)->colour);

    // The loss chart's CSV holds metrics.jsonl's losses, every step, exactly.
    QFile metrics(folder + QStringLiteral("/metrics.jsonl"));
    QVERIFY(metrics.open(QIODevice::ReadOnly));
    std::map<int, double> written;
    for (const QByteArray& line : metrics.readAll().split('\n')) {
        if (line.isEmpty()) continue;
        const QJsonObject record = QJsonDocument::fromJson(line).object();
        written[record.value(QStringLiteral("step")).toInt()] =
            record.value(QStringLiteral("loss")).toDouble();
    }
    QCOMPARE(written.size(), size_t(40));
    const QString csv = window.findChild<normlab::ui::Dashboard*>()->panel(QStringLiteral("loss"))->csv();
    int compared = 0;
    for (const QString& row : csv.split('\n', Qt::SkipEmptyParts)) {
        const QStringList fields = row.split(',');
        if (row.startsWith('#') || fields.size() != 4 || fields[0] != QStringLiteral("train")) continue;
        QCOMPARE(fields[3].toDouble(), written.at(fields[2].toInt()));
        ++compared;
    }
    QCOMPARE(compared, 40);

    // Loading other runs keeps the opened one; Close opened runs removes it.
    window.loadConfig(normlab::test::tinyConfig(10), QStringLiteral("other"));
    QVERIFY(window.store().run(RunFolderOpener::kFirstOpenedId));
    window.findChild<RunFolderOpener*>()->closeAll();
    QVERIFY(!window.store().run(RunFolderOpener::kFirstOpenedId));
}

void OpenRunsTest::nonRunFolderIsRefusedByName() {
    const QString good = m_dir.filePath(QStringLiteral("good"));
    normlab::test::writeRunFolder(good, normlab::test::tinyConfig(5));
    const QString notes = m_dir.filePath(QStringLiteral("notes"));
    QDir().mkpath(notes);
    MainWindow window;
    const QStringList problems = window.openRunFolders({notes, good});
    QCOMPARE(problems.size(), 1);
    QVERIFY2(problems.front().contains(QStringLiteral("notes")) &&
                 problems.front().contains(QStringLiteral("not a run folder")),
             qPrintable(problems.front()));
    QVERIFY(waitLoaded(window));
    QCOMPARE(window.store().run(RunFolderOpener::kFirstOpenedId)->step, int64_t(5));
}

void OpenRunsTest::runWrittenWhileWatchedShowsEveryStep() {
    // A run still being written (summary.json says "running", as the writer leaves it at the start).
    const QString folder = m_dir.filePath(QStringLiteral("live"));
    const normlab::Config config = normlab::test::tinyConfig(30);
    normlab::Trainer trainer(config);
    normlab::RunFolder writer(folder.toStdString(), config, false);
    for (int i = 0; i < 10; ++i) writer.append_metrics(trainer.step().record);
    MainWindow window;
    auto* opener = window.findChild<RunFolderOpener*>();
    opener->setStaleAfter(std::chrono::milliseconds(1500));
    QCOMPARE(window.openRunFolders({folder}), QStringList());
    const int id = RunFolderOpener::kFirstOpenedId;
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(id)->step == 10; }, 10000));
    QCOMPARE(window.store().run(id)->status, normlab::RunStatus::Running);
    // Quiet for longer than the stale time: marked stale; new lines clear it and every step arrives.
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(id)->stale; }, 10000));
    QVERIFY(window.store().run(id)->statusText().contains(QStringLiteral("stale")));
    for (int i = 0; i < 20; ++i) writer.append_metrics(trainer.step().record);
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(id)->step == 30; }, 10000));
    QVERIFY(!window.store().run(id)->stale);
    QCOMPARE(window.store().run(id)->loss.samples().size(), qsizetype(30));
    writer.write_summary(normlab::summary_json(trainer, 1.0));
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(id)->status == normlab::RunStatus::Completed; },
                            10000));
}

void OpenRunsTest::fileWatchDeliversWithoutThePoll() {
    // With the poll an hour away, only the folder and file watches can bring news: appended lines, and
    // a summary.json replaced by rename (which drops a watch on the file itself).
    const QString folder = m_dir.filePath(QStringLiteral("watched"));
    const normlab::Config config = normlab::test::tinyConfig(12);
    normlab::Trainer trainer(config);
    normlab::RunFolder writer(folder.toStdString(), config, false);
    writer.append_metrics(trainer.step().record);
    MainWindow window;
    auto* opener = window.findChild<RunFolderOpener*>();
    opener->setPollInterval(std::chrono::hours(1));
    QCOMPARE(window.openRunFolders({folder}), QStringList());
    const int id = RunFolderOpener::kFirstOpenedId;
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(id)->step == 1; }, 10000));
    QTest::qWait(200);  // the reader now waits on the watch
    for (int i = 1; i < 6; ++i) writer.append_metrics(trainer.step().record);
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(id)->step == 6; }, 10000));
    for (int i = 6; i < 12; ++i) writer.append_metrics(trainer.step().record);
    writer.write_summary(normlab::summary_json(trainer, 1.0));
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(id)->status == normlab::RunStatus::Completed; },
                            10000));
    QCOMPARE(window.store().run(id)->loss.samples().size(), qsizetype(12));
}

void OpenRunsTest::droppedFolderOpens() {
    const QString folder = m_dir.filePath(QStringLiteral("dropped"));
    normlab::test::writeRunFolder(folder, normlab::test::tinyConfig(7));
    MainWindow window;
    window.show();
    QMimeData mime;
    mime.setUrls(
        {QUrl::fromLocalFile(folder), QUrl::fromLocalFile(m_dir.filePath(QStringLiteral("no-such")))});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&window, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&window, &drop);
    QVERIFY(waitLoaded(window));
    QCOMPARE(window.store().run(RunFolderOpener::kFirstOpenedId)->step, int64_t(7));
    // A drop with no folder in it is not taken.
    QMimeData text;
    text.setText(QStringLiteral("hello"));
    QDragEnterEvent refused(QPoint(10, 10), Qt::CopyAction, &text, Qt::LeftButton, Qt::NoModifier);
    refused.setAccepted(false);
    QCoreApplication::sendEvent(&window, &refused);
    QVERIFY(!refused.isAccepted());
}

void OpenRunsTest::bridgeRunShowsPerBlockCharts() {
    const QString folder = QStringLiteral(NORMLAB_TEST_DATA_DIR "/bridge-run");
    MainWindow window;
    const normlab::ui::RunHistory* opened = openAndLoad(window, folder);
    QVERIFY(opened);
    QCOMPARE(opened->statusText(), QStringLiteral("opened from normlab-torch, completed"));
    QCOMPARE(opened->step, int64_t(8));

    // The block-gradient chart ("all matrices") shows, for steps 1 and 8, each block's norm over its
    // four weight matrices: the root of the summed squares of the norms the bridge wrote.
    std::map<std::pair<int, int>, double> expected;  // (step, block) -> norm over the matrices
    QFile metrics(folder + QStringLiteral("/metrics.jsonl"));
    QVERIFY(metrics.open(QIODevice::ReadOnly));
    for (const QByteArray& line : metrics.readAll().split('\n')) {
        const QJsonObject record = QJsonDocument::fromJson(line).object();
        const QJsonArray layers = record.value(QStringLiteral("layers")).toArray();
        for (int b = 0; b < layers.size(); ++b) {
            double squares = 0.0;
            const QJsonObject grad = layers[b].toObject().value(QStringLiteral("grad")).toObject();
            for (const char* matrix : {"w_qkv", "w_o", "w_1", "w_2"})
                squares += std::pow(grad.value(QLatin1String(matrix)).toDouble(), 2);
            expected[{record.value(QStringLiteral("step")).toInt(), b}] = std::sqrt(squares);
        }
    }
    auto* dashboard = window.findChild<normlab::ui::Dashboard*>();
    auto* gradients =
        qobject_cast<normlab::ui::BlockProfilePanel*>(dashboard->panel(QStringLiteral("block_gradient")));
    // The steps the chart shows (each row checked against the folder's numbers), in its CSV's order.
    const auto shownSteps = [&] {
        gradients->refresh();
        QList<int> steps;
        for (const QString& row : gradients->csv().split('\n')) {
            const QStringList fields = row.split(',');
            if (row.startsWith('#') || fields.size() != 4 || !fields[0].startsWith(QStringLiteral("step ")))
                continue;
            const int step = fields[0].mid(5).toInt();
            if (std::abs(fields[3].toDouble() / expected.at({step, fields[2].toInt()}) - 1.0) >= 1e-12)
                return QList<int>{-1};  // a value drawn wrong
            if (steps.isEmpty() || steps.back() != step) steps << step;
        }
        return steps;
    };
    QCOMPARE(shownSteps(), (QList<int>{1, 8}));  // step 1 faint, the newest solid
    // The bridge logged per-block values on steps 1, 2, 4, 6 and 8: a step between shows the one before.
    gradients->showStep(5);  // the "step..." choice: step 5 (so 4) with step 1
    QCOMPARE(shownSteps(), (QList<int>{1, 4}));
    gradients->showStep(6);
    QCOMPARE(shownSteps(), (QList<int>{1, 6}));
    dashboard->zoomSteps({2, 7});  // --steps 2:7: step 7 (so 6) with step 2 faint
    QCOMPARE(shownSteps(), (QList<int>{2, 6}));
    dashboard->zoomSteps({0, 100});  // past the end: the newest
    QCOMPARE(shownSteps(), (QList<int>{1, 8}));

    // Attention was sampled on steps 1, 4 and 8 only: the chart has those points, no zeros between.
    QStringList entropySteps;
    for (const QString& row : dashboard->panel(QStringLiteral("attention"))->csv().split('\n'))
        if (row.startsWith(QStringLiteral("entropy,"))) entropySteps << row.split(',')[2];
    QCOMPARE(entropySteps, (QStringList{QStringLiteral("1"), QStringLiteral("4"), QStringLiteral("8")}));
}

QTEST_MAIN(OpenRunsTest)
#include "test_open_runs.moc"
