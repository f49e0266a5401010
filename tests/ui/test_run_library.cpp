// The run library lists every run folder under the runs folder with its summary and config columns,
// filters by text and status, sorts, and asks to open the selected runs; a folder added by the user
// is scanned too, one that is not a run is left out, and a sweep folder is one row with its progress; a
// thousand runs are all listed (the time it took is printed; scripts/bench_open_runs.py measures the same
// reading code).
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "engine/sweep/sweep_folder.h"
#include "tests/ui/ui_test_support.h"
#include "ui/controls/run_library_panel.h"

using normlab::ui::RunLibraryPanel;

class RunLibraryTest : public QObject {
    Q_OBJECT
  private slots:
    void listsFiltersAndOpens();
    void listsAThousandRuns();

  private:
    static void writeRun(const QString& folder, normlab::NormPlacement placement, int steps);
    QTemporaryDir m_dir;
};

void RunLibraryTest::writeRun(const QString& folder, normlab::NormPlacement placement, int steps) {
    normlab::Config config = normlab::test::tinyConfig(steps);
    config.model.norm_placement = placement;
    normlab::test::writeRunFolder(folder, config);
}

void RunLibraryTest::listsFiltersAndOpens() {
    QCoreApplication::setOrganizationName(QStringLiteral("NormLabTest"));
    QCoreApplication::setApplicationName(
        QStringLiteral("run_library_%1").arg(QCoreApplication::applicationPid()));
    const QString runs = m_dir.filePath(QStringLiteral("runs"));
    qputenv("NORMLAB_RUNS_DIR", runs.toUtf8());
    writeRun(runs + QStringLiteral("/a-post"), normlab::NormPlacement::Post, 6);
    writeRun(runs + QStringLiteral("/b-pre"), normlab::NormPlacement::Pre, 9);
    QDir().mkpath(runs + QStringLiteral("/not-a-run"));
    // A sweep folder (planned, one of its two points done) is one row of its own.
    const nlohmann::ordered_json spec = nlohmann::ordered_json::parse(
        R"({"base": {"preset": "quickstart"}, "axes": {"train.lr": [0.001, 0.01]}, "steps": 4})");
    const normlab::SweepPlan plan = normlab::plan_sweep(normlab::sweep_spec_from_json(spec));
    const QString sweep = runs + QStringLiteral("/lr-sweep");
    normlab::write_sweep(sweep.toStdString(), plan);
    writeRun(QString::fromStdString(normlab::point_folder(sweep.toStdString(), plan.points[0])),
             normlab::NormPlacement::Pre, 4);
    const QString elsewhere = m_dir.filePath(QStringLiteral("elsewhere"));
    writeRun(elsewhere + QStringLiteral("/c-pre"), normlab::NormPlacement::Pre, 4);

    RunLibraryPanel library;
    QSignalSpy scanned(&library, &RunLibraryPanel::scanned);
    library.refresh();
    QVERIFY(scanned.wait(10000));
    QCOMPARE(library.rowCount(), 3);
    library.setStatusFilter(QStringLiteral("sweep"));
    QCOMPARE(library.visibleCount(), 1);
    library.selectAll();
    QCOMPARE(library.selectedFolders(), QStringList{QDir(sweep).absolutePath()});
    library.setFilterText(QStringLiteral("sweep: 1/2 finished"));  // its status text
    QCOMPARE(library.visibleCount(), 1);
    library.setFilterText(QString());
    library.setStatusFilter(QString());
    library.addRoot(elsewhere);
    QVERIFY(scanned.wait(10000));
    QCOMPARE(library.rowCount(), 4);
    QVERIFY(library.roots().contains(elsewhere));

    library.setFilterText(QStringLiteral("pre"));
    QCOMPARE(library.visibleCount(), 3);  // b-pre, c-pre and the sweep (quickstart is Pre-LN)
    library.setStatusFilter(QStringLiteral("diverged"));
    QCOMPARE(library.visibleCount(), 0);
    library.setStatusFilter(QStringLiteral("completed"));
    QCOMPARE(library.visibleCount(), 2);
    library.setFilterText(QString());
    library.setStatusFilter(QString());
    QCOMPARE(library.visibleCount(), 4);

    // A run left "running" by a writer that went quiet 20 minutes ago is listed as stale.
    QFile summary(elsewhere + QStringLiteral("/c-pre/summary.json"));
    QVERIFY(summary.open(QIODevice::WriteOnly | QIODevice::Truncate));
    summary.write(QStringLiteral(R"({"status": "running", "steps": 2, "heartbeat": %1})")
                      .arg(QDateTime::currentSecsSinceEpoch() - 1200)
                      .toUtf8());
    summary.close();
    library.refresh();
    QVERIFY(scanned.wait(10000));
    library.setStatusFilter(QStringLiteral("stale"));
    QCOMPARE(library.visibleCount(), 1);
    library.setStatusFilter(QString());

    QSignalSpy opened(&library, &RunLibraryPanel::openRequested);
    library.setFilterText(QStringLiteral("b-pre"));
    library.selectAll();
    QCOMPARE(library.selectedFolders(), QStringList{runs + QStringLiteral("/b-pre")});
    for (QPushButton* button : library.findChildren<QPushButton*>())
        if (button->text() == QStringLiteral("Open selected")) button->click();
    QCOMPARE(opened.size(), 1);
    QCOMPARE(opened.front().front().toStringList(), QStringList{runs + QStringLiteral("/b-pre")});
    QSettings().clear();
}

void RunLibraryTest::listsAThousandRuns() {
    QCoreApplication::setApplicationName(
        QStringLiteral("run_library_many_%1").arg(QCoreApplication::applicationPid()));
    const QString runs = m_dir.filePath(QStringLiteral("many"));
    const QString first = runs + QStringLiteral("/run0000");
    writeRun(first, normlab::NormPlacement::Pre, 3);
    for (int i = 1; i < 1000; ++i) {
        const QString folder = runs + QStringLiteral("/run%1").arg(i, 4, 10, QLatin1Char('0'));
        QDir().mkpath(folder);
        for (const char* name : {"config.json", "summary.json"})
            QFile::copy(first + QLatin1Char('/') + QLatin1String(name),
                        folder + QLatin1Char('/') + QLatin1String(name));
    }
    qputenv("NORMLAB_RUNS_DIR", runs.toUtf8());
    RunLibraryPanel library;
    QSignalSpy scanned(&library, &RunLibraryPanel::scanned);
    QElapsedTimer timer;
    timer.start();
    library.refresh();
    QVERIFY(scanned.wait(60000));
    qInfo("listed %d runs in %lld ms", library.rowCount(), static_cast<long long>(timer.elapsed()));
    QCOMPARE(library.rowCount(), 1000);
    library.setFilterText(QStringLiteral("run0999"));
    QCOMPARE(library.visibleCount(), 1);
    QSettings().clear();
}

QTEST_MAIN(RunLibraryTest)
#include "test_run_library.moc"
