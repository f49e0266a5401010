// File > New sweep: the dialog plans the sweep of the current settings into a new folder (the points
// of its axes and seeds, each a valid config over the base) and starts normlab-cli's sweep run, whose
// points finish while the test waits; a bad value is shown in the dialog and nothing is started.
#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/new_sweep_dialog.h"
#include "engine/sweep/sweep_folder.h"
#include "tests/ui/ui_test_support.h"

using normlab::gui::NewSweepDialog;

class NewSweepTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void plansAndRunsTheCurrentSettings();
    void aBadValueStaysInTheDialog();

  private:
    QTemporaryDir m_dir;
};

namespace {
// Waits (up to two minutes) until the sweep run the dialog started has finished every point.
bool everyPointFinishes(const QString& folder) {
    const normlab::SweepPlan plan = normlab::load_sweep(folder.toStdString());
    return QTest::qWaitFor(
        [&] {
            for (const normlab::SweepPoint& point : plan.points)
                if (!normlab::is_finished(normlab::point_progress(folder.toStdString(), point).state))
                    return false;
            return true;
        },
        120000);
}
}  // namespace

void NewSweepTest::initTestCase() {
    // The ui tests run from their own folder: the CLI is the one beside the built normlab.
    qputenv(
        "NORMLAB_CLI",
        QFileInfo(QStringLiteral(NORMLAB_APP_PATH)).dir().filePath(QStringLiteral("normlab-cli")).toUtf8());
}

void NewSweepTest::plansAndRunsTheCurrentSettings() {
    normlab::Config base = normlab::test::tinyConfig(6);
    base.model.norm_placement = normlab::NormPlacement::Pre;
    NewSweepDialog dialog(base, m_dir.path());
    dialog.setAxis(0, QStringLiteral("train.lr"), QStringLiteral("1e-3, 1e-2"));
    dialog.setAxis(1, QStringLiteral("model.norm_placement"), QStringLiteral("post, pre"));
    dialog.setAxis(2, QString(), QString());
    dialog.setSeeds(2);
    dialog.setSteps(6);
    dialog.setJobs(2);
    const QString folder = m_dir.filePath(QStringLiteral("sweep"));
    dialog.setFolder(folder);
    QCOMPARE(dialog.planAndStart(), QString());
    const normlab::SweepPlan plan = normlab::load_sweep(folder.toStdString());
    QCOMPARE(plan.points.size(), size_t(8));
    QCOMPARE(plan.base.model.layers, base.model.layers);  // the current settings, not a preset
    QCOMPARE(plan.base.train.steps, 6);
    QCOMPARE(plan.points[0].set["train.lr"].get<double>(), 1e-3);
    QCOMPARE(plan.points[0].set["model.norm_placement"].get<std::string>(), std::string("post"));
    QVERIFY(everyPointFinishes(folder));
}

void NewSweepTest::aBadValueStaysInTheDialog() {
    NewSweepDialog dialog(normlab::test::tinyConfig(6), m_dir.path());
    dialog.setAxis(0, QStringLiteral("model.layers"), QStringLiteral("2, 0"));
    const QString folder = m_dir.filePath(QStringLiteral("bad"));
    dialog.setFolder(folder);
    const QString problem = dialog.planAndStart();
    QVERIFY2(problem.contains(QStringLiteral("model.layers")), qPrintable(problem));
    QCOMPARE(dialog.problem(), problem);
    QVERIFY(!QFileInfo::exists(folder));  // nothing half-planned stays behind
    dialog.setAxis(0, QString(), QStringLiteral("1, 2"));
    QVERIFY(dialog.planAndStart().contains(QStringLiteral("no key")));
    dialog.setAxis(0, QStringLiteral("model.layers"), QStringLiteral("1, 2"));
    dialog.setAxis(1, QString(), QString());
    dialog.setSteps(3);
    QCOMPARE(dialog.planAndStart(), QString());  // fixed: the same folder plans now
    QVERIFY(everyPointFinishes(folder));         // the workers end before the temporary folder goes
}

QTEST_MAIN(NewSweepTest)
#include "test_new_sweep.moc"
