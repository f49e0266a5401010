// Experiment files: the whole state of a session as JSON (the control panel's config, every compared
// run with its config, seed and visibility, the dashboard layout and the notes pinned to charts), so
// it can be saved, shared and reopened. Loading validates everything and names the problem.
#pragma once
#include <QByteArray>
#include <QString>
#include <map>
#include <vector>

#include "engine/config/config.h"
#include "engine/train/live_changes.h"
#include "ui/plots/plot_content.h"

namespace normlab::ui {

struct ExperimentRun {
    QString name;
    normlab::Config config;  // as the run started (live changes are in `changes`)
    bool visible = true;
    std::vector<normlab::LiveChange> changes;  // each with the step it applied before: replayed on Start
    QString folder;     // the run folder of its last start (reopening shows its curves)
    QString group;      // runs with the same group name are one seed group (their mean with a band)
    bool fork = false;  // a branch of another run: its changes replay its parent's up to the fork step
};

struct Experiment {
    normlab::Config current;  // the control panel
    int activeRun = 0;        // the run the control panel edits (an index into runs)
    std::vector<ExperimentRun> runs;
    QByteArray dashboardLayout;                                  // QMainWindow::saveState of the dashboard
    std::map<QString, std::vector<PlotAnnotation>> annotations;  // notes pinned to charts, by chart id
};

QByteArray experimentToJson(const Experiment& experiment);
// Throws normlab::InputError naming the file and what is wrong.
Experiment experimentFromJson(const QByteArray& json, const QString& sourceName);

// Returns an error message, empty on success; the file is replaced atomically.
QString saveExperiment(const Experiment& experiment, const QString& path);
// Throws normlab::InputError (unreadable file, bad JSON, bad config).
Experiment loadExperiment(const QString& path);

}  // namespace normlab::ui
