// The window's side of experiment files: the experiment as it stands (runs as they started, with
// their live changes and folders; notes; layout), saving it, and opening one in place of the runs.
#include "app/gui/main_window.h"

#include "ui/controls/config_panel.h"
#include "ui/dashboard.h"
#include "ui/panels/line_panel.h"

namespace normlab::gui {

ui::Experiment MainWindow::currentExperiment() const {
    ui::Experiment experiment;
    try {
        experiment.current = m_configPanel->config();
    } catch (const std::exception&) {
        experiment.current = m_runs.empty() ? normlab::Config{} : m_runs.front().config;
    }
    experiment.runs = m_runs;
    experiment.activeRun = m_activeRun;
    for (size_t i = 0; i < experiment.runs.size(); ++i) {
        const auto found = m_store.runs().find(static_cast<int>(i));
        if (found == m_store.runs().end()) continue;
        const ui::RunHistory& run = found->second;
        ui::ExperimentRun& saved = experiment.runs[i];
        // A seed group's run is saved shown or hidden as its group is (its own entry is always hidden).
        const int group = liveGroupEntry(static_cast<int>(i));
        saved.visible = group >= 0 ? m_store.runs().at(group).visible : run.visible;
        // A run that trained is saved as it started, with its live changes at their steps (so
        // reopening replays it) and its folder (so reopening shows its curves).
        const std::optional<ui::ExperimentRun> recorded = recordedRun(i);
        if (!recorded) continue;
        saved.config = recorded->config;
        saved.folder = recorded->folder;
        saved.changes = recorded->changes;
        // The controls reopen on the run as it started: Start then replays it, changes included.
        if (static_cast<int>(i) == m_activeRun) experiment.current = saved.config;
    }
    experiment.dashboardLayout = m_dashboard->saveLayout();
    for (ui::ChartPanel* panel : m_dashboard->panels())
        if (auto* line = qobject_cast<ui::LinePanel*>(panel); line && !line->annotations().empty())
            experiment.annotations[line->id()] = line->annotations();
    return experiment;
}

QString MainWindow::saveExperimentTo(const QString& path) {
    return m_document->saveTo(path);
}

void MainWindow::setNotes(const std::map<QString, std::vector<ui::PlotAnnotation>>& notes) {
    for (ui::ChartPanel* panel : m_dashboard->panels())
        if (auto* line = qobject_cast<ui::LinePanel*>(panel)) {
            const auto found = notes.find(line->id());
            line->setAnnotations(found == notes.end() ? std::vector<ui::PlotAnnotation>{} : found->second);
        }
}

QString MainWindow::openExperiment(const QString& path, QStringList* unreadable) {
    ui::Experiment experiment;
    try {
        experiment = ui::loadExperiment(path);
    } catch (const std::exception& error) {
        return QString::fromStdString(error.what());
    }
    if (experiment.runs.empty())
        experiment.runs.push_back({QStringLiteral("run 1"), experiment.current, true, {}, {}});
    setRuns(experiment.runs);
    // The controls edit the run they edited when saved, with the settings they showed then.
    m_activeRun = experiment.activeRun;
    m_configPanel->setConfig(experiment.current);
    // Each saved run shows its curves, live-change markers included, under its own name and colour.
    const QStringList problems = loadSavedCurves(experiment.runs);
    groupLiveRuns();  // the runs' entries were made again as opened folders: their seed groups too
    updateControlsTitle();
    if (!experiment.dashboardLayout.isEmpty()) m_dashboard->restoreLayout(experiment.dashboardLayout);
    setNotes(experiment.annotations);
    m_document->opened(path);
    if (unreadable) *unreadable = problems;
    if (!problems.isEmpty() && !m_scripted)
        showMessage(tr("Some runs' curves cannot be shown"), problems.join(QLatin1Char('\n')));
    return {};
}

}  // namespace normlab::gui
