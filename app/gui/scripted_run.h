// The desktop app driven by its command line, for scripts, tests and the README's pictures: train until
// a step and report (--quit-after-steps), wait until opened folders or an experiment's saved runs are
// read, then take a screenshot, export a chart, save the experiment (--save-experiment), and quit with
// one exit code. Every ending goes through finish(); the window itself never quits on its own.
#pragma once
#include <QObject>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <functional>
#include <optional>

#include "engine/core/step_range.h"
#include "ui/export/chart_export.h"

namespace normlab::gui {

class MainWindow;

class ScriptedRun : public QObject {
    Q_OBJECT
  public:
    explicit ScriptedRun(MainWindow& window);

    // Once the first trained run reaches `steps` (or every run ended): prints each run's step and speed
    // and the charts' cost, saves the screenshot and the experiment where asked, and quits (0; 1 when
    // the screenshot failed, 2 when the experiment could not be saved; 1 when a run failed).
    void quitAfterSteps(int64_t steps, const QString& screenshotPath, const QString& experimentPath);
    // Once every opened folder is read (and, with `untilStep`, the first opened run reaches that step
    // or ends): saves the window as `path` (an empty path only quits). `problems`: runs whose curves
    // cannot be loaded (an experiment's missing folders): then it quits at once with 2, naming them.
    void screenshotWhenOpened(const QString& path, std::optional<int64_t> untilStep = std::nullopt,
                              const QStringList& problems = {});
    // Once the opened folders are read, writes chart `chart` (its figure, or its data for .csv) or,
    // with an empty id, the dashboard figure; then quits with 0, or 2 and a message. `labels`: "RUN=TEXT",
    // each opened run named RUN shown as TEXT (a RUN that is no opened run is an error).
    void exportWhenOpened(const QString& path, const QString& chart, const ui::ImageExportOptions& options,
                          const QStringList& labels = {});
    // Once the opened folders are read, zooms the time charts to `steps` (before a screenshot or export).
    void zoomStepsWhenOpened(const normlab::StepRange& steps);

    // Ends the script: the window closes without asking about unsaved work and the app exits with `code`.
    void finish(int code);

  private:
    // Runs `work` once the opened folders are read (and the first opened run reached `untilStep`), then,
    // with `quit`, finishes with its exit code.
    void whenOpened(std::function<int()> work, std::optional<int64_t> untilStep, bool quit);
    bool openedReady(std::optional<int64_t> untilStep) const;
    void checkSteps();
    void reportSteps(int64_t target) const;
    int saveRequested() const;  // the exit code of saving the screenshot and the experiment
    // Renames the opened runs as `labels` ("RUN=TEXT") say; the problem, or empty.
    QString applyLabels(const QStringList& labels);

    MainWindow& m_window;
    std::optional<int64_t> m_quitAfterSteps;
    QString m_screenshotPath, m_experimentPath;
    bool m_finished = false;
};

}  // namespace normlab::gui
