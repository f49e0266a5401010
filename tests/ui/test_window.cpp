// The main window offscreen: invalid settings are explained in place and block Start; a live control
// reaches the running engine and shows as a marker; a lesson sets up its comparison; a diverged run
// shows where it diverged; presentation mode; the screenshot is a real picture of the window.
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include "app/gui/input_guard.h"
#include "app/gui/main_window.h"
#include "engine/backend/devices.h"
#include "tests/ui/ui_test_support.h"
#include "ui/controls/config_panel.h"
#include "ui/controls/lessons.h"
#include "ui/controls/lessons_panel.h"
#include "ui/dashboard.h"
#include "ui/experiment/experiment_file.h"
#include "ui/panels/event_markers.h"
#include "ui/panels/run_captions.h"

using normlab::gui::MainWindow;
using normlab::gui::WorkerState;

class WindowTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void invalidCombinationIsExplainedInPlace();
    void liveControlReachesEngine();
    void lessonStartsItsComparison();
    void lessonWithSeedsTrainsGroupsAndChangesReachEverySeed();
    void divergedRunIsShown();
    void screenshotAndPresentation();
    void closeEndsTheEngineThread();
    void restartTwiceQuicklyUsesFreshFolders();
    void deviceBoxNamesDevicesAndSwitchesLive();
    void badTextFileChangesNothing();
    void spaceAndWheelWhateverHasFocus();
    void addRunLeavesThePausedLessonAlone();
    void forkHereBranchesTheSelectedRunAndTheControlsChangeTheFork();
    void shortcutHelpListsEveryMenuShortcut();
    void controlsNeverScrollSideways();

  private:
    QTemporaryDir m_dir;
};

using normlab::test::actionNamed;

void WindowTest::initTestCase() {
    qputenv("NORMLAB_RUNS_DIR", m_dir.filePath(QStringLiteral("runs")).toUtf8());
}

void WindowTest::invalidCombinationIsExplainedInPlace() {
    MainWindow window;
    window.show();
    auto* heads = window.configPanel().findChild<QSpinBox*>(QStringLiteral("model.heads"));
    QVERIFY(heads);
    heads->setValue(5);  // d_model 64 is not divisible by 5
    auto* problem = window.configPanel().findChild<QLabel*>(QStringLiteral("configProblem"));
    QVERIFY(problem->isVisible());
    QVERIFY2(problem->text().contains(QStringLiteral("heads")), qPrintable(problem->text()));
    // Also right under the field, d_model (which the message names) outlined, and in the status bar.
    auto* inPlace = window.configPanel().findChild<QLabel*>(QStringLiteral("model.heads.problem"));
    QVERIFY(inPlace && inPlace->isVisible() && inPlace->text() == problem->text());
    QVERIFY(!window.configPanel().findChild<QLabel*>(QStringLiteral("model.d_model.problem"))->isVisible());
    for (const QString& key : {QStringLiteral("model.heads"), QStringLiteral("model.d_model")})
        QVERIFY2(window.configPanel().findChild<QWidget*>(key + QStringLiteral(".outline"))->isVisible(),
                 qPrintable(key));
    QVERIFY2(window.statusBar()->currentMessage().contains(QStringLiteral("heads")),
             qPrintable(window.statusBar()->currentMessage()));
    QAction* start = actionNamed(window, QStringLiteral("Start"));
    QVERIFY(start);
    QVERIFY(!start->isEnabled());
    // Drawn over the form, under the field, and clicks pass through: no row moves (an inserted line
    // once shifted the rows under the pointer).
    auto* below = window.configPanel().findChild<QSpinBox*>(QStringLiteral("model.d_ff"));
    const auto where = [&](QWidget* field) { return field->mapTo(&window.configPanel(), QPoint(0, 0)); };
    auto* headsNotice = window.configPanel().findChild<QLabel*>(QStringLiteral("model.heads.problem"));
    QVERIFY(headsNotice->testAttribute(Qt::WA_TransparentForMouseEvents));
    QCOMPARE(headsNotice->y(), where(heads).y() + heads->height() + 1);
    const QPoint belowWithProblem = where(below);
    heads->setValue(4);
    QCoreApplication::processEvents();
    QCOMPARE(where(below), belowWithProblem);
    heads->setValue(5);
    QCoreApplication::processEvents();
    QCOMPARE(where(below), belowWithProblem);
    heads->setValue(4);
    QVERIFY(!problem->isVisible());
    QVERIFY(!window.configPanel().findChild<QLabel*>(QStringLiteral("model.heads.problem"))->isVisible());
    QVERIFY(start->isEnabled());
}

void WindowTest::liveControlReachesEngine() {
    MainWindow window;
    normlab::Config config = normlab::test::tinyConfig(5000);
    config.model.norm_placement = normlab::NormPlacement::Post;
    window.loadConfig(config, QStringLiteral("live"));
    window.show();
    window.startRuns();
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(0)->step >= 5; }, 30000));
    // The placement combo is live: Post-LN -> Pre-LN mid-run.
    auto* placement = window.configPanel().findChild<QComboBox*>(QStringLiteral("model.norm_placement"));
    placement->setCurrentIndex(placement->findData(QStringLiteral("pre")));
    QVERIFY(QTest::qWaitFor(
        [&] {
            for (const auto& marker : normlab::ui::eventMarkers(window.store()))
                if (marker.label == QStringLiteral("norm_placement=pre")) return true;
            return false;
        },
        30000));
    QCOMPARE(window.workerState(), WorkerState::Running);
    // The run keeps its selection in Runs after the change renamed it.
    auto* runList = window.findChild<QListWidget*>(QStringLiteral("runList"));
    QVERIFY(runList->currentItem());
    QVERIFY2(runList->currentItem()->text().startsWith(QStringLiteral("live (changed)")),
             qPrintable(runList->currentItem()->text()));
    // The Runs list and the export caption say what it switched to and when, not only how it started.
    window.dashboard().refreshNow();
    QVERIFY2(runList->currentItem()->text().contains(QStringLiteral("switched to Pre-LN at step ")),
             qPrintable(runList->currentItem()->text()));
    const QString caption = normlab::ui::captionForRuns(window.store());
    QVERIFY2(caption.contains(QStringLiteral("Post-LN")) &&
                 caption.contains(QStringLiteral("switched to Pre-LN at step ")),
             qPrintable(caption));
    actionNamed(window, QStringLiteral("Stop"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
}

void WindowTest::lessonStartsItsComparison() {
    MainWindow window;
    window.show();
    const normlab::ui::Lesson& lesson = normlab::ui::lessons().front();
    window.startLesson(lesson);
    QCOMPARE(window.store().runs().size(), size_t(lesson.presets.size()));
    QVERIFY(QTest::qWaitFor(
        [&] {
            for (const auto& [id, run] : window.store().runs())
                if (run.step < 2) return false;
            return true;
        },
        60000));
    int index = 0;
    for (const auto& [id, run] : window.store().runs()) QCOMPARE(run.name, lesson.presets[index++]);
    // A pause before the lesson's pause point is a plain pause: not the lesson's "Paused at step 100".
    actionNamed(window, QStringLiteral("Pause"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Paused; }, 30000));
    QVERIFY(window.store().lastStep() < lesson.pauseAtStep);
    QVERIFY2(window.statusBar()->currentMessage() != lesson.pauseText,
             qPrintable(window.statusBar()->currentMessage()));
    actionNamed(window, QStringLiteral("Resume"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Running; }, 30000));
    // The Lessons panel marks the loaded lesson; the controls say which run they edit.
    auto* lessonsPanel = window.findChild<normlab::ui::LessonsPanel*>();
    QVERIFY(lessonsPanel);
    QCOMPARE(lessonsPanel->loadedLesson(), lesson.title);
    auto* controls = window.findChild<QDockWidget*>(QStringLiteral("controlsDock"));
    QCOMPARE(controls->windowTitle(), QStringLiteral("Controls: editing %1").arg(lesson.presets.front()));
    // The lesson pauses where its text says, every run at that step, and says what to do.
    QVERIFY(lesson.pauseAtStep > 0);
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Paused; }, 120000));
    QTest::qWait(200);  // still paused, no step beyond the pause point
    for (const auto& [id, run] : window.store().runs()) QCOMPARE(run.step, int64_t(lesson.pauseAtStep));
    QCOMPARE(window.statusBar()->currentMessage(), lesson.pauseText);
    actionNamed(window, QStringLiteral("Stop"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
    // The status bar says what Runs says: stopped, not "finished".
    QCoreApplication::processEvents();
    bool stoppedShown = false;
    for (QLabel* label : window.statusBar()->findChildren<QLabel*>()) {
        QVERIFY2(label->text() != QStringLiteral("status: finished"), "status bar says finished after Stop");
        stoppedShown |= label->text() == QStringLiteral("status: stopped");
    }
    QVERIFY(stoppedShown);
    // Another configuration loaded: no lesson is marked any more.
    window.loadConfig(normlab::test::tinyConfig(10), QStringLiteral("other"));
    QCOMPARE(lessonsPanel->loadedLesson(), QString());
    QCOMPARE(controls->windowTitle(), QStringLiteral("Controls: editing other"));
}

// A lesson with 2 seeds (the Lessons panel's Seeds box, normlab --lesson-seeds): one seed group per
// preset, its runs hidden behind the group's mean and band; a live change reaches every seed of the
// group the controls edit, and a fork of a group is refused with a message.
void WindowTest::lessonWithSeedsTrainsGroupsAndChangesReachEverySeed() {
    MainWindow window;
    window.show();
    const normlab::ui::Lesson& lesson = normlab::ui::lessons().front();
    window.startLesson(lesson, 2);
    std::vector<const normlab::ui::RunHistory*> groups;
    for (const auto& [id, run] : window.store().runs())
        if (run.bands) groups.push_back(&run);
    QCOMPARE(groups.size(), size_t(lesson.presets.size()));
    QCOMPARE(window.store().runs().size(), size_t(lesson.presets.size()) * 3);  // 2 seeds + the group
    for (size_t g = 0; g < groups.size(); ++g) {
        QCOMPARE(groups[g]->name, lesson.presets[int(g)]);
        QCOMPARE(groups[g]->bands->members.size(), size_t(2));
        QCOMPARE(groups[g]->bands->seeds, QStringLiteral("1, 2"));
        for (int member : groups[g]->bands->members) {
            const normlab::ui::RunHistory* run = window.store().run(member);
            QVERIFY(!run->visible);
            QCOMPARE(run->groupId, groups[g]->id);
        }
    }
    auto* lessonsPanel = window.findChild<normlab::ui::LessonsPanel*>();
    QCOMPARE(lessonsPanel->seeds(), 2);
    auto* controls = window.findChild<QDockWidget*>(QStringLiteral("controlsDock"));
    QCOMPARE(controls->windowTitle(),
             QStringLiteral("Controls: editing %1 (2 seeds)").arg(lesson.presets.front()));
    const std::vector<int> firstSeeds = groups.front()->bands->members;
    QVERIFY(QTest::qWaitFor(
        [&] {
            window.store().rebuildGroups();
            const normlab::ui::RunHistory* first = window.store().run(groups.front()->id);
            return first->step >= 5 && first->bands->seedsLogged == 2;
        },
        60000));
    // The two seeds train differently: the band has a width.
    const normlab::ui::SeedBands& band = *window.store().run(groups.front()->id)->bands;
    QVERIFY(band.lossLow.lastValue() && band.lossHigh.lastValue());
    QVERIFY(*band.lossLow.lastValue() < *band.lossHigh.lastValue());
    QCOMPARE(window.store().run(firstSeeds[1])->config.train.seed, uint64_t(2));
    // A live change made in the controls reaches both seeds of the group they edit, and no other run.
    auto* placement = window.configPanel().findChild<QComboBox*>(QStringLiteral("model.norm_placement"));
    placement->setCurrentIndex(placement->findData(QStringLiteral("pre")));
    auto switched = [&](int id) {
        for (const normlab::Event& event : window.store().run(id)->events)
            if (event.kind == "change" && event.key == "model.norm_placement") return true;
        return false;
    };
    QVERIFY(QTest::qWaitFor([&] { return switched(firstSeeds[0]) && switched(firstSeeds[1]); }, 30000));
    for (const normlab::ui::RunHistory* group : groups)
        for (int member : group->bands->members) QCOMPARE(switched(member), group == groups.front());
    QVERIFY2(window.store().run(groups.front()->id)->name.endsWith(QStringLiteral("(changed)")),
             qPrintable(window.store().run(groups.front()->id)->name));
    QVERIFY(!window.store().run(groups[1]->id)->name.endsWith(QStringLiteral("(changed)")));
    QVERIFY(window.forkRunAt(firstSeeds[0], 1).contains(QStringLiteral("its seeds fork together")));
    // Paused, the group forks: every seed at the step it is at, into a new group beside it that starts
    // from its parents' past; the controls then change the fork group only.
    actionNamed(window, QStringLiteral("Pause"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Paused; }, 30000));
    window.store().rebuildGroups();
    QVERIFY2(window.store().run(groups.front()->id)->bands->summary.endsWith(QStringLiteral("2 paused")),
             qPrintable(window.store().run(groups.front()->id)->bands->summary));
    const int64_t pausedAt = window.store().run(firstSeeds[0])->step;
    QCOMPARE(window.store().run(firstSeeds[1])->step, pausedAt);
    const size_t entries = window.store().runs().size();
    actionNamed(window, QStringLiteral("Fork here"))->trigger();
    const normlab::ui::RunHistory* fork = nullptr;
    QVERIFY(QTest::qWaitFor(
        [&] {
            window.store().rebuildGroups();
            for (const auto& [id, run] : window.store().runs())
                if (run.bands && run.name.contains(QStringLiteral(" / fork@%1").arg(pausedAt))) fork = &run;
            return fork && fork->loss.lastValue() && fork->step == pausedAt;
        },
        30000));
    QCOMPARE(window.store().runs().size(), entries + 3);  // two seeds and their group
    QCOMPARE(fork->bands->members.size(), size_t(2));
    QCOMPARE(controls->windowTitle(), QStringLiteral("Controls: editing %1 (2 seeds)").arg(fork->name));
    const std::vector<int> forkSeeds = fork->bands->members;
    placement->setCurrentIndex(placement->findData(QStringLiteral("post")));
    actionNamed(window, QStringLiteral("Resume"))->trigger();
    auto switchedBack = [&](int id) {
        for (const normlab::Event& event : window.store().run(id)->events)
            if (event.kind == "change" && event.value == "post") return true;
        return false;
    };
    QVERIFY(QTest::qWaitFor([&] { return switchedBack(forkSeeds[0]) && switchedBack(forkSeeds[1]); }, 30000));
    QVERIFY(!switchedBack(firstSeeds[0]) && !switchedBack(firstSeeds[1]));  // the parents go on as they were
    actionNamed(window, QStringLiteral("Stop"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
}

void WindowTest::divergedRunIsShown() {
    MainWindow window;
    window.loadConfig(normlab::test::divergingConfig(), QStringLiteral("blowup"));
    window.show();
    window.startRuns();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
    const auto& run = *window.store().run(0);
    QCOMPARE(run.status, normlab::RunStatus::Diverged);
    QVERIFY(window.findChild<QLabel*>() != nullptr);
    bool statusShown = false;
    for (QLabel* label : window.findChildren<QLabel*>())
        statusShown |= label->text().contains(QStringLiteral("diverged at step %1").arg(run.divergedAt));
    QVERIFY(statusShown);
    window.dashboard().refreshNow();  // drawing a diverged run does not crash
}

void WindowTest::screenshotAndPresentation() {
    MainWindow window;
    window.resize(1400, 900);
    window.loadConfig(normlab::test::tinyConfig(60), QStringLiteral("shot"));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.startRuns();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
    const QString path = m_dir.filePath(QStringLiteral("window.png"));
    QCOMPARE(window.saveScreenshot(path), QString());
    const QImage image(path);
    QCOMPARE(image.size(), window.size());
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 5)
        for (int x = 0; x < image.width(); x += 5) colours.insert(image.pixel(x, y));
    QVERIFY2(colours.size() > 50, qPrintable(QString::number(colours.size())));

    // Presentation: the controls and lessons go, Runs stays; dock titles and selectors grow to 16 pt.
    const double normalPoints = window.findChild<normlab::ui::Dashboard*>()->font().pointSizeF();
    window.setPresentation(true);
    for (QDockWidget* dock : window.findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly))
        QCOMPARE(dock->isVisible(), dock->objectName() == QLatin1String("runsDock"));
    auto* dashboard = window.findChild<normlab::ui::Dashboard*>();
    QCOMPARE(dashboard->findChild<QComboBox*>()->font().pointSizeF(), 16.0);
    QCOMPARE(window.findChild<QDockWidget*>(QStringLiteral("runsDock"))->font().pointSizeF(), 16.0);
    window.setPresentation(false);
    QCOMPARE(dashboard->findChild<QComboBox*>()->font().pointSizeF(), normalPoints);
    QVERIFY(window.findChild<QDockWidget*>(QStringLiteral("controlsDock"))->isVisible());
    QCOMPARE(window.saveScreenshot(m_dir.filePath(QStringLiteral("no/such/dir/x.png"))).isEmpty(), false);
}

void WindowTest::closeEndsTheEngineThread() {
    auto* window = new MainWindow;
    window->loadConfig(normlab::test::tinyConfig(100000), QStringLiteral("long"));
    window->show();
    window->startRuns();
    QVERIFY(QTest::qWaitFor([&] { return window->store().run(0)->step >= 3; }, 30000));
    QVERIFY(window->engineThreadRunning());
    window->saveExperimentTo(m_dir.filePath(QStringLiteral("close.json")));  // nothing unsaved: no question
    QVERIFY(window->close());
    QVERIFY(!window->engineThreadRunning());
    delete window;
}

void WindowTest::restartTwiceQuicklyUsesFreshFolders() {
    MainWindow window;
    window.loadConfig(normlab::test::tinyConfig(100000), QStringLiteral("twice"));
    window.show();
    window.startRuns();
    const QString first = window.store().run(0)->folder;
    window.startRuns();  // F5 twice within a millisecond
    const QString second = window.store().run(0)->folder;
    QVERIFY(first != second);
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(0)->step >= 5; }, 30000));
    QCOMPARE(window.workerState(), WorkerState::Running);
    QVERIFY(QFile::exists(second + QStringLiteral("/metrics.jsonl")));
    QVERIFY(QFile::exists(first + QStringLiteral("/summary.json")));  // the first run was stopped, not lost
    actionNamed(window, QStringLiteral("Stop"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
}

void WindowTest::badTextFileChangesNothing() {
    MainWindow window;
    window.loadConfig(normlab::test::tinyConfig(6), QStringLiteral("kept"));
    window.show();
    window.startRuns();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
    const long long steps = window.store().run(0)->step;
    QVERIFY(steps >= 6);
    // A binary file as the corpus: Start says why and the finished run and its charts stay.
    const QString binary = m_dir.filePath(QStringLiteral("binary.dat"));
    QFile file(binary);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray("\xff\xfe\x00\x81 not text", 14));
    file.close();
    auto* row = window.configPanel().findChild<QWidget*>(QStringLiteral("data.text_path"));
    QVERIFY(row);
    auto* textPath = row->findChild<QLineEdit*>();
    QVERIFY(textPath);
    textPath->setText(binary);
    textPath->setModified(true);
    emit textPath->editingFinished();
    // Flagged in place as soon as it is chosen, and Start is refused.
    auto* problem = window.configPanel().findChild<QLabel*>(QStringLiteral("configProblem"));
    QVERIFY2(problem->isVisible() && problem->text().contains(QStringLiteral("UTF-8")),
             qPrintable(problem->text()));
    QAction* start = actionNamed(window, QStringLiteral("Start"));
    QVERIFY(start && !start->isEnabled());
    window.startRuns();
    QCoreApplication::processEvents();
    QCOMPARE(window.store().run(0)->step, steps);
    QCOMPARE(window.store().run(0)->name, QStringLiteral("kept"));
    auto* dialog = window.findChild<QMessageBox*>(QStringLiteral("errorDialog"));
    QVERIFY(dialog);
    QVERIFY2(dialog->text().contains(QStringLiteral("UTF-8")), qPrintable(dialog->text()));
}

void WindowTest::spaceAndWheelWhateverHasFocus() {
    // Space pauses and resumes with focus on a combo box, a check box or the Runs list; in a text field
    // it is text, and Esc hands focus back to the charts. The wheel over a combo box without focus
    // leaves its value alone.
    MainWindow window;
    window.loadConfig(normlab::test::tinyConfig(100000), QStringLiteral("keys"));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* speed = window.findChild<QComboBox*>(QStringLiteral("speedLimit"));
    speed->setCurrentIndex(speed->findData(20.0));
    QCOMPARE(window.startRuns(), QString());
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Running; }, 30000));
    auto* placement = window.configPanel().findChild<QComboBox*>(QStringLiteral("model.norm_placement"));
    QCheckBox* box = nullptr;
    for (QCheckBox* each : window.configPanel().findChildren<QCheckBox*>())
        if (each->isVisible() && each->isEnabled()) box = each;
    auto* runs = window.findChild<QListWidget*>(QStringLiteral("runList"));
    QVERIFY(placement && box && runs);
    const int placementIndex = placement->currentIndex();
    const bool ticked = box->isChecked();
    auto* heads = window.configPanel().findChild<QSpinBox*>(QStringLiteral("model.heads"));
    QVERIFY(heads);
    const int headCount = heads->value();
    for (QWidget* focus : {static_cast<QWidget*>(placement), static_cast<QWidget*>(box),
                           static_cast<QWidget*>(runs), static_cast<QWidget*>(heads)}) {
        focus->setFocus();
        QVERIFY(QTest::qWaitFor([&] { return focus->hasFocus(); }, 2000));
        QTest::keyClick(focus, Qt::Key_Space);
        QVERIFY2(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Paused; }, 10000),
                 qPrintable(focus->metaObject()->className()));
        QTest::keyClick(focus, Qt::Key_Space);
        QVERIFY2(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Running; }, 10000),
                 qPrintable(focus->metaObject()->className()));
    }
    QCOMPARE(placement->currentIndex(), placementIndex);
    QCOMPARE(box->isChecked(), ticked);
    QCOMPARE(heads->value(), headCount);
    // A text field keeps Space as text; Esc returns focus to the charts.
    QLineEdit* text = nullptr;
    for (QLineEdit* line : window.configPanel().findChildren<QLineEdit*>())
        if (normlab::gui::InputGuard::isTextField(line) && line->isVisible()) text = line;
    QVERIFY(text);
    text->setFocus();
    QVERIFY(QTest::qWaitFor([&] { return text->hasFocus(); }, 2000));
    const QString before = text->text();
    QTest::keyClick(text, Qt::Key_Space);
    QCOMPARE(text->text(), before + QLatin1Char(' '));
    QCOMPARE(window.workerState(), WorkerState::Running);
    text->setText(before);  // unmodified again: leaving the field asks nothing
    QTest::keyClick(text, Qt::Key_Escape);
    QVERIFY(window.dashboard().hasFocus());
    // The wheel over a combo box that has no focus does not change it.
    QVERIFY(!placement->hasFocus());
    const QPointF centre = QPointF(placement->rect().center());
    QWheelEvent wheel(centre, QPointF(placement->mapToGlobal(centre.toPoint())), QPoint(), QPoint(0, -120),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(placement, &wheel);
    QCOMPARE(placement->currentIndex(), placementIndex);
    actionNamed(window, QStringLiteral("Stop"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
}

void WindowTest::addRunLeavesThePausedLessonAlone() {
    // The Post-LN lesson paused at its pause point; Add run joins a fourth run from step 0 while the
    // three go on from where they were, with their folders, when resumed.
    MainWindow window;
    window.show();
    const normlab::ui::Lesson& lesson = normlab::ui::lessons().front();
    QVERIFY(lesson.pauseAtStep > 0);
    window.startLesson(lesson);
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Paused; }, 120000));
    std::vector<int64_t> steps;
    std::vector<QString> folders;
    for (int id = 0; id < 3; ++id) {
        steps.push_back(window.store().run(id)->step);
        folders.push_back(window.store().run(id)->folder);
    }
    QCOMPARE(steps.front(), int64_t(lesson.pauseAtStep));
    auto* add = window.findChild<QPushButton*>(QStringLiteral("addRun"));
    QVERIFY(add);
    add->click();
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(3) && window.store().run(3)->started; }, 30000));
    QCOMPARE(window.workerState(), WorkerState::Paused);
    for (int id = 0; id < 3; ++id) {
        QCOMPARE(window.store().run(id)->step, steps[id]);
        QCOMPARE(window.store().run(id)->folder, folders[id]);
    }
    QCOMPARE(window.store().run(3)->step, int64_t(0));
    actionNamed(window, QStringLiteral("Resume"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(3)->step >= 5; }, 60000));
    for (int id = 0; id < 3; ++id) {
        QVERIFY2(window.store().run(id)->step > steps[id], qPrintable(QString::number(id)));
        QCOMPARE(window.store().run(id)->folder, folders[id]);
    }
    actionNamed(window, QStringLiteral("Stop"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
}

// Paused at step N, "Fork selected run here" adds "<run> / fork@N" with the parent's history, selected;
// a live change then goes to the fork alone (its events), and the parent trains on as it was.
void WindowTest::forkHereBranchesTheSelectedRunAndTheControlsChangeTheFork() {
    MainWindow window;
    normlab::Config config = normlab::test::tinyConfig(100000);
    config.model.norm_placement = normlab::NormPlacement::Post;
    window.loadConfig(config, QStringLiteral("stuck"));
    window.show();
    auto* fork = window.findChild<QPushButton*>(QStringLiteral("forkRun"));
    QVERIFY(fork);
    QVERIFY(!actionNamed(window, QStringLiteral("Fork here"))->isEnabled());  // nothing trains yet
    window.startRuns();
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(0)->step >= 8; }, 30000));
    actionNamed(window, QStringLiteral("Pause"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Paused; }, 30000));
    QTest::qWait(100);
    const int64_t at = window.store().run(0)->step;
    fork->click();
    QVERIFY(QTest::qWaitFor(
        [&] { return window.store().run(1) && window.store().run(1)->name.contains("fork@"); }, 30000));
    const normlab::ui::RunHistory& branch = *window.store().run(1);
    QCOMPARE(branch.name, QStringLiteral("stuck / fork@%1").arg(at));
    QCOMPARE(branch.step, at);
    QCOMPARE(branch.loss.bucketCount(),
             window.store().run(0)->loss.bucketCount());  // the parent's past is the fork's
    QVERIFY(branch.colour != window.store().run(0)->colour);
    auto* difference = window.dashboard().panel(QStringLiteral("difference"));
    QCOMPARE(difference->shownTitle(),
             QStringLiteral("Difference B - A: loss (%1 - stuck)").arg(branch.name));
    auto* runList = window.findChild<QListWidget*>(QStringLiteral("runList"));
    QVERIFY(runList->currentItem() && runList->currentItem()->text().startsWith(branch.name));
    auto* placement = window.configPanel().findChild<QComboBox*>(QStringLiteral("model.norm_placement"));
    placement->setCurrentIndex(placement->findData(QStringLiteral("pre")));
    actionNamed(window, QStringLiteral("Resume"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(1)->step >= at + 5; }, 60000));
    actionNamed(window, QStringLiteral("Stop"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
    const auto changes = [](const QString& folder) {
        QFile file(folder + QStringLiteral("/events.jsonl"));
        QStringList found;
        if (file.open(QIODevice::ReadOnly))
            while (!file.atEnd()) found << QString::fromUtf8(file.readLine()).trimmed();
        return found;
    };
    const QStringList parentEvents = changes(window.store().run(0)->folder);
    QCOMPARE(parentEvents.size(), 1);  // its stop, and no change
    QVERIFY2(parentEvents.front().contains(QStringLiteral("\"kind\":\"stopped\"")),
             qPrintable(parentEvents.front()));
    const QStringList forked = changes(window.store().run(1)->folder);
    QCOMPARE(forked.size(), 2);  // the change, then its stop
    QVERIFY2(forked.front().contains(QStringLiteral("\"step\":%1").arg(at + 1)) &&
                 forked.front().contains(QStringLiteral("\"value\":\"pre\"")),
             qPrintable(forked.front()));
    QVERIFY(window.store().run(0)->step > at);  // the parent went on
    // Saved, the fork is its parent's start plus the change at N+1: Start replays it from step 0.
    const QString path = m_dir.filePath(QStringLiteral("fork.normlab"));
    QCOMPARE(window.saveExperimentTo(path), QString());
    const normlab::ui::Experiment saved = normlab::ui::loadExperiment(path);
    QCOMPARE(saved.runs.size(), size_t(2));
    QCOMPARE(saved.runs[1].config.model.norm_placement, normlab::NormPlacement::Post);
    QCOMPARE(saved.runs[1].changes.size(), size_t(1));
    QCOMPARE(saved.runs[1].changes.front().at_step, at + 1);
    QCOMPARE(saved.runs[1].changes.front().value, std::string("pre"));
    QVERIFY(saved.runs[0].changes.empty());
    // Nothing training: Fork explains itself in a dialog and adds no run.
    fork->click();
    auto* dialog = window.findChild<QMessageBox*>(QStringLiteral("errorDialog"));
    QVERIFY(dialog && dialog->text().contains(QStringLiteral("branches a run that is training")));
    dialog->close();
    QCOMPARE(window.store().runs().size(), size_t(2));
}

// Help > Keyboard shortcuts is built from the menus' actions: each shortcut there, with what it does.
void WindowTest::shortcutHelpListsEveryMenuShortcut() {
    MainWindow window;
    const QString table = window.shortcutTable();
    int listed = 0;
    for (const QAction* action : window.findChildren<QAction*>()) {
        if (action->shortcut().isEmpty() || action->associatedObjects().isEmpty()) continue;
        const QString key = action->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped();
        QVERIFY2(table.contains(QStringLiteral("<b>%1</b>").arg(key)), qPrintable(key));
        ++listed;
    }
    QVERIFY2(listed >= 10, qPrintable(QString::number(listed)));
    QVERIFY(table.contains(QStringLiteral("<b>Ctrl+K</b></td><td>A new run from the selected run")));
    QVERIFY(table.contains(QStringLiteral("<b>F5</b></td><td>Start the experiment")));
}

QTEST_MAIN(WindowTest)
// The device box names what this machine has (the GPU's name, or why there is none); changing the
// device or the threads mid-run moves the run, and the "in use" line follows; a device that cannot be
// had is a dialog, and the run goes on.
void WindowTest::deviceBoxNamesDevicesAndSwitchesLive() {
    MainWindow window;
    window.loadConfig(normlab::test::tinyConfig(100000), QStringLiteral("device"));
    window.show();
    auto* device = window.configPanel().findChild<QComboBox*>(QStringLiteral("device"));
    QVERIFY(device);
    QCOMPARE(device->count(), 3);
    QCOMPARE(device->itemData(0).toString(), QStringLiteral("auto"));
    for (const normlab::DeviceInfo& info : normlab::list_devices()) {
        const int index = device->findData(QString::fromStdString(info.id));
        QVERIFY(index > 0);
        const QString text = device->itemText(index);
        const QString tip = device->itemData(index, Qt::ToolTipRole).toString();
        if (info.available) {
            QVERIFY2(text.contains(QString::fromStdString(info.label)), qPrintable(text));
        } else {
            QVERIFY2(text.contains(QStringLiteral("unavailable")), qPrintable(text));
            QCOMPARE(tip, QString::fromStdString(info.reason));
        }
    }

    window.startRuns();
    auto* inUse = window.configPanel().findChild<QLabel*>(QStringLiteral("deviceInUse"));
    QVERIFY(QTest::qWaitFor([&] { return inUse->text().contains(QStringLiteral("1 thread)")); }, 30000));
    auto* threads = window.configPanel().findChild<QSpinBox*>(QStringLiteral("threads"));
    threads->setValue(2);
    QVERIFY(QTest::qWaitFor([&] { return inUse->text().contains(QStringLiteral("2 threads)")); }, 30000));

    const bool cudaAvailable = normlab::list_devices().back().available;
    if (!cudaAvailable) {
        device->setCurrentIndex(device->findData(QStringLiteral("cuda")));
        QMessageBox* dialog = nullptr;
        QVERIFY(QTest::qWaitFor(
            [&] { return (dialog = window.findChild<QMessageBox*>(QStringLiteral("errorDialog"))); }, 30000));
        QVERIFY2(dialog->text().contains(QStringLiteral("device=cuda")), qPrintable(dialog->text()));
        const int64_t step = window.store().run(0)->step;
        QVERIFY(QTest::qWaitFor([&] { return window.store().run(0)->step >= step + 3; }, 30000));
        QVERIFY(inUse->text().contains(QStringLiteral("cpu")));
    }
    actionNamed(window, QStringLiteral("Stop"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
}

// The controls fit their dock's width at the window's usual size: no sideways scroll bar, and moving the
// focus through every field (Tab) never scrolls the labels out of view (a trial found it did).
void WindowTest::controlsNeverScrollSideways() {
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* panel = window.findChild<normlab::ui::ConfigPanel*>();
    QVERIFY(panel);
    auto* scroll = qobject_cast<QScrollArea*>(panel->parentWidget()->parentWidget());
    QVERIFY(scroll);
    QCoreApplication::processEvents();
    QVERIFY2(scroll->horizontalScrollBar()->maximum() == 0,
             qPrintable(QStringLiteral("panel needs %1 px, the dock shows %2")
                            .arg(panel->minimumSizeHint().width())
                            .arg(scroll->viewport()->width())));
    for (QWidget* field : panel->findChildren<QWidget*>()) {
        if (!field->isVisibleTo(panel) || !(field->focusPolicy() & Qt::TabFocus)) continue;
        field->setFocus(Qt::TabFocusReason);
        QCoreApplication::processEvents();
        QVERIFY2(scroll->horizontalScrollBar()->value() == 0, qPrintable(field->objectName()));
    }
}

#include "test_window.moc"
