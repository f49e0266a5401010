// The NormLab window: control panel, lessons and runs on the sides, the chart dashboard in the
// middle, run controls in a toolbar with shortcuts and a status bar. It owns the engine thread and
// turns user actions into queued worker calls; telemetry comes back by value into the store.
#pragma once
#include <QElapsedTimer>
#include <QMainWindow>
#include <QPointer>
#include <QSet>
#include <QThread>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "app/gui/experiment_document.h"
#include "app/gui/run_folder_opener.h"
#include "app/gui/run_replay.h"
#include "app/gui/training_worker.h"
#include "engine/core/step_range.h"
#include "ui/controls/lessons.h"
#include "ui/dashboard.h"
#include "ui/experiment/experiment_file.h"
#include "ui/export/chart_export.h"
#include "ui/history/progress_rate.h"
#include "ui/history/telemetry_store.h"
#include "ui/sweep/sweep_map_window.h"

class QAction;
class QComboBox;
class QLabel;
class QMenu;

namespace normlab::ui {
class RunLibraryPanel;
class ConfigPanel;
class Dashboard;
class LessonsPanel;
class RunsPanel;
}  // namespace normlab::ui

namespace normlab::gui {

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    static constexpr const char* kStabilityMapChart = "stability_map";  // --chart id of a sweep's map
    // The store ids of the seed groups of runs trained here (window_seed_groups.cpp): trained runs use
    // 0, 1, ... below it, opened folders RunFolderOpener::kFirstOpenedId and up.
    static constexpr int kFirstLiveGroupId = 900;
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Replaces the experiment by one run of `config` (not started).
    void loadConfig(const normlab::Config& config, const QString& name);
    // The same with the current settings and the model keys of a Hugging Face config.json (or its
    // folder; window_hf_import.cpp). The problem (every refused key named; nothing changed), or empty.
    QString loadHuggingFaceConfig(const QString& path);
    // Starts a lesson's runs; with `seeds` > 1 each preset from that many seeds, as a seed group.
    void startLesson(const normlab::ui::Lesson& lesson, int seeds = 1);
    // Opens run folders (each a run on every chart, read off the GUI thread); returns the problems
    // (also shown in a dialog), one per folder that is not a run folder.
    QStringList openRunFolders(const QStringList& folders);
    // Starts every run from step 0; the reason it cannot (also shown in a dialog), or empty.
    QString startRuns();
    // Saves a PNG of the whole window (or of the newest stability map); an error message, or empty.
    QString saveScreenshot(const QString& path);
    // Driven by a script (ScriptedRun): lesson pause points are skipped and a failed run shows no dialog.
    void setScripted(bool scripted) { m_scripted = scripted; }
    // Forks opened or replayed run `storeId` into live training from its folder's checkpoint at `step`
    // (run_forks.cpp): the fork joins the runs training, or starts paused when none is. Returns the
    // problem (no such checkpoint: the steps it has), empty when the engine thread was asked.
    QString forkFromFolderAt(int storeId, int64_t step);
    // Forks run `runId` at `step` (a chart's pinned readout): a run trained here from its newest fork
    // point at or before it (its current state when the step is now), an opened or replayed run from
    // its folder's checkpoint there. The problem, or empty when the engine thread was asked.
    QString forkRunAt(int runId, int64_t step);
    // Where forkRunAt(the run a chart's fork entry forks, step) would start (the chart menu's text).
    ui::ForkTarget forkTargetAt(int64_t step) const;
    // Where a fork of `runId` asked for at `step` starts, or why it cannot (forkRunAt and the chart menu).
    ui::ForkTarget forkTarget(int runId, int64_t step) const;
    // How often runs trained here keep their state for forks at an earlier step (Run > Fork points).
    void setForkPoints(const normlab::SnapshotSettings& settings);
    // Closes the window without asking about unsaved work (a script's end).
    void closeWithoutAsking();
    // Help > Keyboard shortcuts: every menu action's shortcut and what it does, as an HTML table.
    QString shortcutTable() const;
    // Draws every chart and stability map now (seed groups rebuilt first).
    void refreshCharts();
    // Presentation mode: large fonts, thick lines, charts and run controls only; full screen unless
    // fullScreen is false (scripted screenshots at a given --size).
    void setPresentation(bool on, bool fullScreen = true);
    // The stage: presentation mode with one or two big charts (Dashboard::setStage), chosen with
    // setStageCharts (ids; the error, or empty) and cycled with Page Down / Page Up.
    void setStage(bool on, bool fullScreen = true);
    bool onStage() const { return !m_dashboard->stage().isEmpty(); }
    QString setStageCharts(const QStringList& ids);
    const QStringList& stageCharts() const { return m_stageCharts; }
    // Replaces the runs by the experiment saved in `path`, each saved run with its curves loaded from its
    // folder; the error (nothing changed), or empty. `unreadable`: the saved runs whose curves cannot be
    // shown (their folders are gone or unreadable), one line each (also shown in a notice).
    QString openExperiment(const QString& path, QStringList* unreadable = nullptr);
    QString saveExperimentTo(const QString& path);

    // Replays recorded run folders (window_replay.cpp): they join the charts at step 0 and play at
    // `stepsPerSecond` (Space pauses, F10 steps); a set of folders named as a lesson's presets pauses
    // at that lesson's pause point (not under a script). The problems, one per folder; the rest play.
    QStringList replayFolders(const QStringList& folders, double stepsPerSecond = RunReplay::kDefaultSpeed);
    RunReplay& replay() { return *m_replay; }
    ui::TelemetryStore& store() { return m_store; }
    ui::Dashboard& dashboard() { return *m_dashboard; }
    ui::ConfigPanel& configPanel() { return *m_configPanel; }
    WorkerState workerState() const { return m_state; }
    bool engineThreadRunning() const { return m_engineThread.isRunning(); }
    RunFolderOpener& opener() { return *m_opener; }
    ExperimentDocument& document() { return *m_document; }
    // The newest stability map still open, if any.
    ui::SweepMapWindow* lastSweepMap() const;
    // The size a script asked for (--size): the window's now, and every stability map's opened after.
    void setRequestedSize(const QSize& size);

  signals:
    void telemetryAbsorbed();
    void workerStateChanged(normlab::gui::WorkerState state);
    void workerFailed(const QString& message);

  protected:
    void closeEvent(QCloseEvent* event) override;
    // Folders dropped on the window open as run folders.
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

  private:
    void buildActions();
    void buildMenus();
    void buildFileMenu();
    // File > Export dashboard (PNG, SVG, PDF) and Save screenshot.
    void addExportActions(QMenu* file);
    void addHuggingFaceAction(QMenu* file);  // window_hf_import.cpp
    void buildRunAndViewMenus();
    void addStageMenu(QMenu* view);
    void addReplayAction(QMenu* file);
    // Trained runs that have not started are placeholders: hidden (ticked again in Runs) while opened or
    // replayed runs are looked at.
    void hidePlaceholderRuns();
    // Space and F10 while a replay is the window's only activity: pause / resume, one step. True when
    // the key went to the replay.
    bool replayHandlesPause();
    bool replayHandlesStep();
    void buildHelpMenu();
    void buildDocks();
    void buildStatusBar();
    void setRuns(std::vector<ui::ExperimentRun> runs);
    void stopRuns();
    void resetRuns();
    void addRunFromPanel();
    // Forks (run_forks.cpp): asks the engine thread to branch run `parentId` at its current step, and,
    // once it has, gives the fork its parent's history and the controls.
    void forkRun(int parentId);
    // An opened or replayed run (`storeId`, not one trained here) forked into live training from one of
    // its folder's checkpoints: asks which (the nearest before the step shown first), then
    // forkFromFolderAt.
    void forkFromFolder(int storeId);
    // A fork's entry: in the experiment (saved with `startConfig`), the store and a new run folder
    // (named for `step` when it is known before the fork exists).
    RunSpec addForkEntry(const QString& name, normlab::Config config, normlab::Config startConfig,
                         int64_t step = -1);
    // Asks the engine thread to branch run `parentId` at its current step into a new entry, a run of the
    // seed group `group` when it is not empty.
    void requestFork(int parentId, const QString& group);
    void onForked(int runId, int parentId, qint64 step);
    // A run added or forked that the engine refused: its entry goes, and the reason is shown.
    void onRunRefused(int runId, const QString& message);
    void selectRun(int id);
    // Seed groups of runs trained here (window_seed_groups.cpp): the store's group entries made again
    // from the runs' ExperimentRun::group; the runs in `runId`'s group (itself alone when none); the
    // store id of its group's entry (-1: none); the first run of the group entry `storeId` (-1: not one);
    // a live change of the active run made to every run of its group too.
    void groupLiveRuns();
    std::vector<int> liveGroupOf(int runId) const;
    int liveGroupEntry(int runId) const;
    int firstMemberOfLiveGroup(int storeId) const;
    void applyLiveChangeToGroup(const QString& key, const QString& value);
    // The runs (and seed groups) a change has reached in `batch` get " (changed)" after their names.
    void markChangedRuns(const ui::TelemetryBatch& batch);
    // What a run changed live has after its name: " (changed)".
    static QString changedSuffix();
    // Forks every seed of `memberId`'s group at the step they are paused at into a new group beside it.
    void forkLiveGroup(int memberId);
    // What the controls say they edit for run `runId`: its seed group's name, else its own.
    QString editedName(int runId) const;
    // The run selected in Runs is an opened or replayed one (forked from its folder, not its state now).
    bool selectedFromFolder() const;
    void onLiveChange(const QString& key, const QString& value);
    void onRestartNeeded(const QString& key);
    void onTelemetry(const normlab::ui::TelemetryBatch& batch);
    void onStateChanged(normlab::gui::WorkerState state);
    void onWorkerFailed(const QString& message);
    void showMessage(const QString& title, const QString& text);
    void updateActions();
    void updateStatusBar();
    // The notes pinned to the line charts, by chart id (none: every chart's notes go).
    void setNotes(const std::map<QString, std::vector<ui::PlotAnnotation>>& notes);
    // Some run has trained steps that no saved experiment holds.
    bool hasUnsavedResults() const;
    static QStringList runFoldersIn(const QString& folder);
    // Where new runs and sweeps go: $NORMLAB_RUNS_DIR, else the chosen folder, else ~/normlab-runs.
    static QString runsRoot();
    // Opens a sweep folder's stability map in a window of its own; the problem, or empty.
    QString openSweepMap(const QString& folder);
    // Opens an edge search folder's chart (ui/sweep/edge_window.h) in a window of its own; the problem.
    QString openEdgeWindow(const QString& folder);
    QString openCoordCheckWindow(const QString& folder);
    template <class ChartWindow>
    QString openChartWindow(const QString& folder);
    // Loads each saved run's curves from its folder into the run's own entry; the runs that cannot.
    QStringList loadSavedCurves(const std::vector<ui::ExperimentRun>& runs);
    void updateControlsTitle();
    // The toolbar's speed limit (steps a second), sent to the worker when chosen.
    QComboBox* makeSpeedBox();
    // The control panel's settings become the active run's config.
    void syncActiveRunFromPanel();
    // Start again after runs trained (window_restart.cpp): run `index` as it trained (start config,
    // live changes at their steps; none if it has not trained); every trained run's entry set to it,
    // the controls' `edited` settings applied to the run they edit where nothing recorded is lost or
    // the user chose them (`editNote` then says so); false when the user cancelled.
    std::optional<ui::ExperimentRun> recordedRun(size_t index) const;
    bool takeRecordedRuns(const normlab::Config& edited, QString* editNote);
    enum class EditsOrRecorded { Edits, Recorded, Cancel };
    EditsOrRecorded askEditsOrRecorded(const ui::ExperimentRun& run, const QStringList& keys, bool fork);
    // A new run's name: "run N (Pre-LN)".
    static QString defaultRunName(const normlab::Config& config, int index);
    void rebuildRecentMenu();
    ui::Experiment currentExperiment() const;
    QString runFolderFor(const QString& name, const QString& stamp, int index);
    bool runsActive() const { return m_state == WorkerState::Running || m_state == WorkerState::Paused; }

    ui::TelemetryStore m_store;
    ui::ProgressRate m_progress;  // each run's steps a second in wall time, for the status bar
    QElapsedTimer m_clock;
    ui::Dashboard* m_dashboard = nullptr;
    ui::ConfigPanel* m_configPanel = nullptr;
    ui::RunsPanel* m_runsPanel = nullptr;
    ui::LessonsPanel* m_lessonsPanel = nullptr;
    RunFolderOpener* m_opener = nullptr;
    RunReplay* m_replay = nullptr;
    std::vector<QPointer<ui::SweepMapWindow>> m_sweepMaps;  // stability maps of opened sweep folders
    QSize m_requestedSize;                                  // --size (invalid: none asked for)
    QPointer<QWidget>
        m_lastFolderWindow;  // the newest stability map, edge or coord check chart (screenshots)
    ui::RunLibraryPanel* m_library = nullptr;
    QThread m_engineThread;
    TrainingWorker* m_worker = nullptr;
    WorkerState m_state = WorkerState::Idle;

    std::vector<ui::ExperimentRun> m_runs;  // the experiment's runs (ids = index)
    int m_activeRun = 0;                    // the run the control panel edits
    int m_selectedRun = -1;                 // the run selected in Runs (an opened or replayed one too)
    std::map<QString, int> m_liveGroupIds;  // a seed group's name -> its entry's store id
    ExperimentDocument* m_document = nullptr;
    QSet<QString> m_reservedFolders;  // run folders handed out by this window
    bool m_presentation = false;
    bool m_scripted = false;
    QByteArray m_layoutBeforePresentation;

    std::vector<normlab::Config> m_startConfigs;  // each run's config when it last started
    int m_experiment = 0;                         // counts the experiments setRuns made (TelemetryBatch)
    std::pair<int64_t, QString> m_lessonPause;    // the loaded lesson's pause step and what to do there
    QString m_pauseText;                          // shown when this start's runs reach their pause point

    QAction *m_start = nullptr, *m_pause = nullptr, *m_step = nullptr, *m_stop = nullptr, *m_reset = nullptr;
    QAction* m_presentationAction = nullptr;
    QAction *m_stageAction = nullptr, *m_stageNext = nullptr, *m_stagePrevious = nullptr;
    QStringList m_stageCharts = ui::Dashboard::defaultStage();
    QAction* m_fork = nullptr;
    QMenu* m_recentMenu = nullptr;
    QLabel *m_stepLabel = nullptr, *m_speedLabel = nullptr, *m_deviceLabel = nullptr,
           *m_statusLabel = nullptr;
};

}  // namespace normlab::gui
