// MainWindow: the wiring of panels, actions and the engine thread, and the runs' lifecycle (start, stop,
// add, live changes). Its other jobs have files of their own: window_menus, window_folders,
// window_experiment, window_restart, window_status, window_presentation and run_forks.cpp.
#include "app/gui/main_window.h"

#include "app/gui/fork_points_dialog.h"
#include "app/gui/input_guard.h"
#include "engine/data/task.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QLabel>
#include <QMessageBox>
#include <QMimeData>
#include <QRegularExpression>
#include <QScrollArea>
#include <QStatusBar>
#include <QToolBar>
#include <QUrl>
#include <algorithm>
#include <cstdio>

#include "engine/config/config_source.h"
#include "engine/config/presets.h"
#include "ui/controls/config_panel.h"
#include "ui/controls/lessons_panel.h"
#include "ui/controls/run_library_panel.h"
#include "ui/controls/runs_panel.h"
#include "ui/dashboard.h"
#include "ui/panels/block_profile_panel.h"
#include "ui/panels/run_captions.h"

namespace normlab::gui {

QString MainWindow::defaultRunName(const normlab::Config& config, int index) {
    return QStringLiteral("run %1 (%2)").arg(index + 1).arg(ui::placementLabel(config.model.norm_placement));
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(tr("NormLab"));
    setObjectName(QStringLiteral("mainWindow"));
    resize(1680, 1020);
    m_dashboard = new ui::Dashboard(m_store);
    setCentralWidget(m_dashboard);
    m_opener = new RunFolderOpener(m_store, this);
    m_replay = new RunReplay(m_store, this);
    connect(m_replay, &RunReplay::stateChanged, this, [this] {
        updateActions();
        updateStatusBar();
    });
    connect(m_replay, &RunReplay::stepShown, this, &MainWindow::updateStatusBar);
    connect(m_replay, &RunReplay::pausePoint, this,
            [this](const QString& text) { statusBar()->showMessage(text); });
    m_document = new ExperimentDocument([this] { return currentExperiment(); }, this);
    connect(m_document, &ExperimentDocument::titleChanged, this, &QWidget::setWindowTitle);
    connect(m_document, &ExperimentDocument::recentChanged, this, &MainWindow::rebuildRecentMenu);
    setAcceptDrops(true);

    m_worker = new TrainingWorker;
    m_worker->moveToThread(&m_engineThread);
    m_engineThread.setObjectName(QStringLiteral("normlab-engine"));
    connect(&m_engineThread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &TrainingWorker::telemetry, this, &MainWindow::onTelemetry);
    connect(m_worker, &TrainingWorker::stateChanged, this, &MainWindow::onStateChanged);
    connect(m_worker, &TrainingWorker::failed, this, &MainWindow::onWorkerFailed);
    connect(m_worker, &TrainingWorker::forked, this, &MainWindow::onForked);
    setForkPoints(forkPointSettings());
    connect(m_worker, &TrainingWorker::runRefused, this, &MainWindow::onRunRefused);
    connect(m_worker, &TrainingWorker::deviceInUse, this,
            [this](int id, const QString& device, const QString& reason) {
                if (id == m_activeRun)
                    m_configPanel->setDeviceInUse(tr("in use: %1 (%2)").arg(device, reason));
                m_deviceLabel->setText(tr("device: %1").arg(device));
                m_deviceLabel->setToolTip(reason);
            });
    connect(m_worker, &TrainingWorker::changeRejected, this,
            [this](int id, const QString& key, const QString& message) {
                const QString run =
                    id >= 0 && id < static_cast<int>(m_runs.size()) ? m_runs[id].name : tr("the run");
                showMessage(tr("%1 was not changed").arg(key),
                            tr("%1 goes on unchanged: %2").arg(run, message));
            });
    m_engineThread.start();
    m_clock.start();

    buildActions();
    // Space pauses from any widget but a text field; Esc there returns focus to the charts.
    m_dashboard->setFocusPolicy(Qt::StrongFocus);
    qApp->installEventFilter(new InputGuard(m_pause, m_dashboard, this));
    buildDocks();
    buildMenus();
    buildStatusBar();
    loadConfig(normlab::preset_config(normlab::kDefaultPreset), QString::fromLatin1(normlab::kDefaultPreset));
    m_document->setDirty(false);
    updateActions();
}

MainWindow::~MainWindow() {
    delete m_opener;  // joins its loading threads while the store they fill still exists
    if (m_engineThread.isRunning()) {
        m_worker->requestStop();
        QMetaObject::invokeMethod(m_worker, &TrainingWorker::shutdown, Qt::QueuedConnection);
        m_engineThread.wait();
    }
}

void MainWindow::buildActions() {
    const auto make = [this](const QString& text, const QKeySequence& shortcut, const QString& tip,
                             auto slot) {
        auto* action = new QAction(text, this);
        action->setShortcut(shortcut);
        action->setToolTip(QStringLiteral("%1 (%2)").arg(tip, shortcut.toString()));
        action->setStatusTip(tip);
        action->setShortcutContext(Qt::ApplicationShortcut);
        connect(action, &QAction::triggered, this, slot);
        return action;
    };
    m_start = make(tr("Start"), QKeySequence(Qt::Key_F5), tr("Start the experiment's runs from step 0"),
                   [this] { startRuns(); });
    m_pause = make(tr("Pause"), QKeySequence(Qt::Key_Space), tr("Pause or resume between two steps"), [this] {
        if (replayHandlesPause()) return;
        if (m_state == WorkerState::Running)
            QMetaObject::invokeMethod(m_worker, &TrainingWorker::pause, Qt::QueuedConnection);
        if (m_state == WorkerState::Paused)
            QMetaObject::invokeMethod(m_worker, &TrainingWorker::resume, Qt::QueuedConnection);
    });
    m_step = make(tr("Step"), QKeySequence(Qt::Key_F10), tr("While paused: one step of every run"), [this] {
        if (replayHandlesStep()) return;
        QMetaObject::invokeMethod(m_worker, &TrainingWorker::stepOnce, Qt::QueuedConnection);
    });
    m_stop = make(tr("Stop"), QKeySequence(Qt::SHIFT | Qt::Key_F5),
                  tr("Stop the runs (their folders keep everything logged)"), [this] { stopRuns(); });
    m_reset = make(tr("Reset"), QKeySequence(Qt::CTRL | Qt::Key_R),
                   tr("Stop and clear the charts; Start begins again"), [this] { resetRuns(); });
    m_presentationAction =
        make(tr("Presentation mode"), QKeySequence(Qt::Key_F11), tr("Large fonts, thick lines, charts only"),
             [this] { setPresentation(!m_presentation); });
    m_presentationAction->setCheckable(true);
    m_stageAction = make(tr("Stage layout"), QKeySequence(Qt::SHIFT | Qt::Key_F11),
                         tr("Presentation with one or two big charts (View > Stage chooses them)"),
                         [this] { setStage(!onStage()); });
    m_stageAction->setCheckable(true);
    // Page Down / Page Up: what a presenter's remote sends.
    m_stageNext =
        make(tr("Next chart on stage"), QKeySequence(Qt::Key_PageDown),
             tr("On the stage: the next chart in the last place"), [this] { m_dashboard->cycleStage(1); });
    m_stagePrevious = make(tr("Previous chart on stage"), QKeySequence(Qt::Key_PageUp),
                           tr("On the stage: the previous chart in the last place"),
                           [this] { m_dashboard->cycleStage(-1); });
    for (QAction* action : {m_stageNext, m_stagePrevious}) action->setEnabled(false);
    // Held by the window too: their keys work while presentation hides the menu bar.
    addActions({m_stageAction, m_stageNext, m_stagePrevious});
    m_fork = make(tr("Fork here"), QKeySequence(Qt::CTRL | Qt::Key_K),
                  tr("A new run from the selected run's state at its current step, on the same batches"),
                  [this] { forkRun(selectedFromFolder() ? m_selectedRun : m_activeRun); });
    m_fork->setObjectName(QStringLiteral("forkRun"));
    auto* toolbar = addToolBar(tr("Run"));
    toolbar->setObjectName(QStringLiteral("runToolbar"));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    for (QAction* action : {m_start, m_pause, m_step, m_stop, m_reset, m_fork}) toolbar->addAction(action);
    toolbar->addSeparator();
    toolbar->addAction(m_presentationAction);
    toolbar->addSeparator();
    toolbar->addWidget(new QLabel(tr(" Speed ")));
    toolbar->addWidget(makeSpeedBox());
}

void MainWindow::buildDocks() {
    m_configPanel = new ui::ConfigPanel;
    auto* scroll = new QScrollArea;
    scroll->setWidget(m_configPanel);
    scroll->setWidgetResizable(true);
    scroll->setMinimumWidth(300);
    auto* controls = new QDockWidget(tr("Controls"), this);
    controls->setObjectName(QStringLiteral("controlsDock"));
    controls->setWidget(scroll);
    addDockWidget(Qt::LeftDockWidgetArea, controls);

    auto* lessons = m_lessonsPanel = new ui::LessonsPanel;
    auto* lessonsDock = new QDockWidget(tr("Lessons"), this);
    lessonsDock->setObjectName(QStringLiteral("lessonsDock"));
    lessonsDock->setWidget(lessons);
    addDockWidget(Qt::RightDockWidgetArea, lessonsDock);
    m_runsPanel = new ui::RunsPanel(m_store);
    auto* runsDock = new QDockWidget(tr("Runs"), this);
    runsDock->setObjectName(QStringLiteral("runsDock"));
    runsDock->setWidget(m_runsPanel);
    addDockWidget(Qt::RightDockWidgetArea, runsDock);
    splitDockWidget(lessonsDock, runsDock, Qt::Vertical);
    m_library = new ui::RunLibraryPanel;
    auto* libraryDock = new QDockWidget(tr("Run library"), this);
    libraryDock->setObjectName(QStringLiteral("libraryDock"));
    libraryDock->setWidget(m_library);
    addDockWidget(Qt::RightDockWidgetArea, libraryDock);
    tabifyDockWidget(lessonsDock, libraryDock);
    lessonsDock->raise();
    connect(m_library, &ui::RunLibraryPanel::openRequested, this, [this](const QStringList& folders) {
        if (!folders.isEmpty()) openRunFolders(folders);
    });
    // The library is read when first shown (a scan reads two small files per run).
    connect(libraryDock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible && m_library->rowCount() == 0) m_library->refresh();
    });
    resizeDocks({lessonsDock}, {300}, Qt::Horizontal);

    // A lesson replaces the runs: finished runs whose results were not saved are asked about first.
    connect(lessons, &ui::LessonsPanel::lessonRequested, this, [this](const ui::Lesson& lesson) {
        if (hasUnsavedResults() && !m_document->confirmDiscard()) return;
        startLesson(lesson, m_lessonsPanel->seeds());
    });
    connect(m_runsPanel, &ui::RunsPanel::addRunRequested, this, &MainWindow::addRunFromPanel);
    connect(m_runsPanel, &ui::RunsPanel::forkRequested, this, &MainWindow::forkRun);
    connect(m_dashboard, &ui::Dashboard::refreshed, m_runsPanel, &ui::RunsPanel::updateStatus);
    connect(m_dashboard, &ui::Dashboard::refreshed, this, &MainWindow::updateStatusBar);
    m_dashboard->setForkTargets([this](int64_t step) { return forkTargetAt(step); });
    connect(m_dashboard, &ui::Dashboard::forkAtStepRequested, this, [this](qint64 step) {
        if (const QString problem = forkRunAt(selectedFromFolder() ? m_selectedRun : m_activeRun, step);
            !problem.isEmpty())
            showMessage(tr("Cannot fork"), problem);
    });
    connect(m_runsPanel, &ui::RunsPanel::runSelected, this, &MainWindow::selectRun);
    connect(m_configPanel, &ui::ConfigPanel::liveChanged, this, &MainWindow::onLiveChange);
    connect(m_configPanel, &ui::ConfigPanel::restartNeeded, this, &MainWindow::onRestartNeeded);
    connect(m_configPanel, &ui::ConfigPanel::validityChanged, this, [this](bool valid) {
        updateActions();
        if (!valid) statusBar()->showMessage(tr("Cannot start: %1").arg(m_configPanel->problem()), 15000);
        // Fixed: the complaint goes (another message stays).
        if (valid && statusBar()->currentMessage().startsWith(tr("Cannot start")))
            statusBar()->clearMessage();
    });
    connect(&m_store, &ui::TelemetryStore::runsChanged, this, [this] { m_document->setDirty(true); });
}

void MainWindow::loadConfig(const normlab::Config& config, const QString& name) {
    setRuns({ui::ExperimentRun{name, config, true, {}, {}}});
}

void MainWindow::setRuns(std::vector<ui::ExperimentRun> runs) {
    stopRuns();
    QMetaObject::invokeMethod(m_worker, &TrainingWorker::forgetRuns, Qt::QueuedConnection);
    // What the replaced runs still report (a paused run's last flush as it stops) is not the new runs'.
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, experiment = ++m_experiment] { worker->setExperiment(experiment); },
        Qt::QueuedConnection);
    m_lessonsPanel->setLoadedLesson(QString());  // startLesson names its lesson afterwards
    m_lessonPause = {};
    // The previous experiment's runs go, with what may still be loading into them; opened run folders
    // stay on the charts.
    for (size_t i = 0; i < m_runs.size(); ++i) m_opener->forget(static_cast<int>(i));
    m_runs = std::move(runs);
    m_activeRun = 0;
    std::vector<int> previous;
    for (const auto& [id, run] : m_store.runs())
        if (id < RunFolderOpener::kFirstOpenedId) previous.push_back(id);
    for (int id : previous) m_store.removeRun(id);
    // A new experiment: untitled (Save asks for a name) and without the last one's notes.
    setNotes({});
    m_document->startUntitled();
    for (size_t i = 0; i < m_runs.size(); ++i) {
        ui::RunHistory& history =
            m_store.addRun(static_cast<int>(i), m_runs[i].name, m_runs[i].config, QString());
        history.visible = m_runs[i].visible;
    }
    groupLiveRuns();
    if (!m_runs.empty()) m_configPanel->setConfig(m_runs.front().config);
    updateControlsTitle();
    updateActions();
}

void MainWindow::startLesson(const ui::Lesson& lesson, int seeds) {
    m_lessonsPanel->setSeeds(seeds);
    setRuns(ui::lessonRuns(lesson, m_lessonsPanel->seeds()));
    m_lessonsPanel->setLoadedLesson(lesson.title);
    m_lessonPause = {lesson.pauseAtStep, lesson.pauseText};
    for (const QString& id : {QStringLiteral("block_gradient"), QStringLiteral("block_resid")})
        if (auto* panel = qobject_cast<ui::BlockProfilePanel*>(m_dashboard->panel(id)))
            panel->setInitialOnly(lesson.atInitialisation);
    statusBar()->showMessage(tr("Lesson: %1").arg(lesson.title), 8000);
    startRuns();
}

QString MainWindow::runFolderFor(const QString& name, const QString& stamp, int index) {
    const QString root = runsRoot();
    QString safe = name;
    safe.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("_"));
    // Unique even for two starts within a millisecond or two windows at once: a numbered suffix.
    const QString base = QDir(root).filePath(QStringLiteral("%1-%2-%3").arg(stamp).arg(index).arg(safe));
    QString folder = base;
    for (int attempt = 2; QFileInfo::exists(folder) || m_reservedFolders.contains(folder); ++attempt)
        folder = base + QStringLiteral("-%1").arg(attempt);
    m_reservedFolders.insert(folder);
    return folder;
}

QString MainWindow::startRuns() {
    if (!m_configPanel->problem().isEmpty()) {
        showMessage(tr("Cannot start"), m_configPanel->problem());
        return m_configPanel->problem();
    }
    QString editNote;
    try {
        const normlab::Config edited = m_configPanel->config();
        // Each run's data (a text file that is missing or not UTF-8, say) is checked before anything
        // changes: on error the stopped runs and their charts stay as they were.
        // Only a user's own text file or tokenizer can fail this way; the shipped corpus and the
        // synthetic tasks are not built twice (the engine thread builds them again for training).
        for (size_t i = 0; i < m_runs.size(); ++i) {
            const normlab::Config& config = i == size_t(m_activeRun) ? edited : m_runs[i].config;
            if (normlab::task_data_can_fail(config.data))
                normlab::make_task(config.data, config.model.seq_len, config.train.seed);
        }
        // Runs that trained start again as recorded; the controls' edits only where the user says so.
        if (!takeRecordedRuns(edited, &editNote)) return tr("cancelled");
    } catch (const std::exception& error) {
        showMessage(tr("Cannot start"), QString::fromStdString(error.what()));
        return QString::fromStdString(error.what());
    }
    m_configPanel->setConfig(m_runs.at(m_activeRun).config);
    updateControlsTitle();  // a run started with the user's edits may have a new name
    if (runsActive()) m_worker->requestStop();
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
    RunPlan plan;
    // A lesson pauses where its text says (not in a scripted run, which must reach its step by itself).
    if (!m_scripted) plan.pauseAtStep = m_lessonPause.first;
    m_pauseText = m_scripted ? QString() : m_lessonPause.second;
    m_startConfigs.clear();
    for (size_t i = 0; i < m_runs.size(); ++i) {
        const int id = static_cast<int>(i);
        const QString folder = runFolderFor(m_runs[i].name, stamp, id);
        // A run keeps the visibility the user gave it once it trained; a placeholder that stepped aside
        // for opened runs shows again.
        const ui::RunHistory* previous = m_store.run(id);
        const bool visible = previous && previous->started ? previous->visible : m_runs[i].visible;
        m_store.addRun(id, m_runs[i].name, m_runs[i].config, folder).visible = visible;
        // An experiment's recorded live changes are replayed, each before its step.
        plan.runs.push_back({id, m_runs[i].name, m_runs[i].config, folder, m_runs[i].changes});
        m_startConfigs.push_back(m_runs[i].config);
    }
    groupLiveRuns();  // the runs' entries were made again: their groups too
    QDir().mkpath(QFileInfo(plan.runs.front().folder).absolutePath());
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, plan] { worker->start(plan, false); }, Qt::QueuedConnection);
    // With edits, what they are rather than where the folders go (both did not fit the status bar).
    statusBar()->showMessage(editNote.isEmpty()
                                 ? tr("Started %1 run(s); run folders under %2")
                                       .arg(plan.runs.size())
                                       .arg(QFileInfo(plan.runs.front().folder).absolutePath())
                                 : tr("Started %1 run(s); %2").arg(plan.runs.size()).arg(editNote),
                             editNote.isEmpty() ? 8000 : 20000);
    return {};
}

void MainWindow::stopRuns() {
    if (!runsActive()) return;
    m_worker->requestStop();
    QMetaObject::invokeMethod(m_worker, &TrainingWorker::stop, Qt::QueuedConnection);
}

void MainWindow::resetRuns() {
    stopRuns();
    QMetaObject::invokeMethod(m_worker, &TrainingWorker::forgetRuns, Qt::QueuedConnection);
    // The runs trained here start again; opened folders and seed groups keep what they read.
    std::vector<int> trained;
    for (const auto& [id, run] : m_store.runs())
        if (run.source.isEmpty()) trained.push_back(id);
    for (int id : trained) m_store.restartRun(id);  // a seed group's run: what its group holds of it too
    groupLiveRuns();
    m_store.absorb({});
    m_state = WorkerState::Idle;
    updateActions();
    updateStatusBar();
}

void MainWindow::addRunFromPanel() {
    normlab::Config config;
    try {
        config = m_configPanel->config();
        normlab::validate(config);
    } catch (const std::exception& error) {
        showMessage(tr("Cannot add the run"), QString::fromStdString(error.what()));
        return;
    }
    m_runs.push_back({defaultRunName(config, static_cast<int>(m_runs.size())), config, true, {}, {}});
    const int id = static_cast<int>(m_runs.size()) - 1;
    m_activeRun = id;
    updateControlsTitle();
    if (!runsActive()) {
        m_store.addRun(id, m_runs.back().name, config, QString());
        m_runsPanel->setSelectedRun(id);  // the controls edit it now: Runs says so
        statusBar()->showMessage(tr("Added %1; the controls edit it now").arg(m_runs.back().name), 6000);
        return;
    }
    // The other runs go on as they are (steps, pause, the lesson's pause point): the new one joins
    // them from its step 0.
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
    const RunSpec spec{id, m_runs.back().name, config, runFolderFor(m_runs.back().name, stamp, id), {}};
    m_store.addRun(id, spec.name, config, spec.folder);
    m_startConfigs.resize(m_runs.size() - 1, config);
    m_startConfigs.push_back(config);
    QDir().mkpath(QFileInfo(spec.folder).absolutePath());
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, spec] { worker->addRun(spec); }, Qt::QueuedConnection);
    m_runsPanel->setSelectedRun(id);
    statusBar()->showMessage(tr("Added %1; the other runs go on, the controls edit it").arg(spec.name), 6000);
}

void MainWindow::onRunRefused(int runId, const QString& message) {
    // The entry made for it goes (when nothing was added after it, as ids are positions).
    if (runId == static_cast<int>(m_runs.size()) - 1) {
        m_runs.pop_back();
        m_startConfigs.resize(m_runs.size());
        m_store.removeRun(runId);
        if (m_activeRun >= static_cast<int>(m_runs.size())) {
            m_activeRun = std::max(0, static_cast<int>(m_runs.size()) - 1);
            updateControlsTitle();
        }
    }
    if (!m_scripted) showMessage(tr("The run was not made"), message);
    statusBar()->showMessage(message, 10000);
}

void MainWindow::syncActiveRunFromPanel() {
    // A field that does not parse keeps the run's last valid config (the panel shows the problem).
    try {
        m_runs.at(m_activeRun).config = m_configPanel->config();
        // A run that has not trained is what the controls say: its Runs row shows the edit at once.
        if (const ui::RunHistory* run = m_store.run(m_activeRun);
            run && !run->started &&
            normlab::config_to_json(run->config) != normlab::config_to_json(m_runs[m_activeRun].config))
            m_store.setConfig(m_activeRun, m_runs[m_activeRun].config);
    } catch (const std::exception&) {
    }
}

bool MainWindow::selectedFromFolder() const {
    return m_selectedRun >= RunFolderOpener::kFirstOpenedId && m_store.runs().count(m_selectedRun) > 0;
}

void MainWindow::selectRun(int id) {
    m_selectedRun = id;
    updateActions();  // an opened or replayed run can be forked from its folder's checkpoints
    // A seed group trained here: the controls edit its runs (the first shows their settings).
    if (const int member = firstMemberOfLiveGroup(id); member >= 0) id = member;
    if (id < 0 || id >= static_cast<int>(m_runs.size()) || id == m_activeRun) return;
    syncActiveRunFromPanel();
    m_activeRun = id;
    m_configPanel->setConfig(m_runs[id].config);
    statusBar()->showMessage(tr("Controls now edit %1").arg(editedName(id)), 4000);
    updateControlsTitle();
}

void MainWindow::onLiveChange(const QString& key, const QString& value) {
    syncActiveRunFromPanel();
    m_document->setDirty(true);
    if (!runsActive()) return;
    applyLiveChangeToGroup(key, value);  // the active run, and every seed of its group
    updateControlsTitle();
    statusBar()->showMessage(tr("%1 = %2 for %3 at the next step").arg(key, value, editedName(m_activeRun)),
                             4000);
}

void MainWindow::onRestartNeeded(const QString& key) {
    m_document->setDirty(true);
    if (!runsActive()) {
        syncActiveRunFromPanel();
        return;
    }
    const auto answer = QMessageBox::question(
        this, tr("Restart the runs?"),
        tr("%1 cannot change during a run. Restart the experiment from step 0 with the new setting?\n"
           "(No puts the control back.)")
            .arg(key));
    if (answer == QMessageBox::Yes) {
        startRuns();
    } else {
        m_configPanel->setConfig(m_runs.at(m_activeRun).config);
    }
}

void MainWindow::onTelemetry(const ui::TelemetryBatch& batch) {
    if (batch.experiment != m_experiment) return;  // from the runs of an experiment since replaced
    m_store.absorb(batch);
    markChangedRuns(batch);
    emit telemetryAbsorbed();
}

void MainWindow::onStateChanged(WorkerState state) {
    // A lesson's pause point: the worker paused itself there; say what to do now (until the next
    // message), once. A pause the user makes before it (Space at step 47) is a plain pause.
    m_store.rebuildGroups();  // a seed group's step as its seeds' now (lastStep reads the shown entries)
    if (state == WorkerState::Paused && m_state == WorkerState::Running && !m_pauseText.isEmpty() &&
        m_store.lastStep() >= m_lessonPause.first) {
        statusBar()->showMessage(m_pauseText);
        m_pauseText.clear();
    }
    if (state != WorkerState::Paused && state != WorkerState::Running) m_pauseText.clear();
    m_state = state;
    m_store.setPaused(state == WorkerState::Paused);
    updateActions();
    updateStatusBar();
    emit workerStateChanged(state);
}

void MainWindow::onWorkerFailed(const QString& message) {
    std::fprintf(stderr, "normlab: %s\n", message.toUtf8().constData());
    if (!m_scripted) showMessage(tr("The run could not continue"), message);
    emit workerFailed(message);  // a script ends with a non-zero exit
}

void MainWindow::showMessage(const QString& title, const QString& text) {
    auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("errorDialog"));
    box->open();
}

void MainWindow::updateActions() {
    const bool valid = m_configPanel && m_configPanel->problem().isEmpty();
    m_start->setEnabled(valid);
    m_start->setToolTip(valid ? tr("Start the experiment's runs from step 0 (F5)")
                              : tr("Cannot start: %1").arg(m_configPanel->problem()));
    m_start->setText(runsActive() ? tr("Restart") : tr("Start"));
    m_pause->setEnabled(runsActive() || m_replay->active());
    // The lessons' durations are measured while nothing trains (and never under a script).
    if (m_lessonsPanel) m_lessonsPanel->setMeasuringAllowed(!runsActive() && !m_scripted);
    m_pause->setText(m_state == WorkerState::Paused ? tr("Resume") : tr("Pause"));
    m_step->setEnabled(m_state == WorkerState::Paused ||
                       (m_replay->active() && !runsActive() && !m_replay->playing()));
    m_stop->setEnabled(runsActive());
    m_fork->setEnabled(runsActive() || selectedFromFolder());
}

bool MainWindow::hasUnsavedResults() const {
    if (!m_document->dirty()) return false;
    return std::any_of(m_store.runs().begin(), m_store.runs().end(), [](const auto& entry) {
        return entry.second.source.isEmpty() && entry.second.step > 0;
    });
}

namespace {
// The local folders among dropped URLs.
QStringList droppedFolders(const QMimeData* mime) {
    QStringList folders;
    if (!mime || !mime->hasUrls()) return folders;
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile() && QFileInfo(url.toLocalFile()).isDir()) folders << url.toLocalFile();
    return folders;
}
}  // namespace

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!droppedFolders(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QStringList folders = droppedFolders(event->mimeData());
    if (folders.isEmpty()) return;
    event->acceptProposedAction();
    openRunFolders(folders);
}

void MainWindow::closeWithoutAsking() {
    m_document->setDirty(false);
    close();
}

void MainWindow::refreshCharts() {
    m_store.rebuildGroups();  // seed groups' means as their runs stand now, not at the last rebuild tick
    m_dashboard->refreshNow();
    for (const QPointer<ui::SweepMapWindow>& map : m_sweepMaps)
        if (map) map->refreshNow();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!m_document->confirmDiscard()) {
        event->ignore();
        return;
    }
    m_worker->requestStop();
    QMetaObject::invokeMethod(m_worker, &TrainingWorker::shutdown, Qt::QueuedConnection);
    m_engineThread.wait();
    event->accept();
}

}  // namespace normlab::gui
