// Start again after runs trained (F5 on a finished or stopped experiment): each run that trained starts
// as it was recorded, its start config with its live changes replayed at their steps, so a fork
// follows its parent's path to the same step again and then its own; edits the controls hold for the
// run they edit are applied only when the user says so, never silently over what it recorded.
#include <QMessageBox>
#include <QPushButton>

#include "app/gui/main_window.h"
#include "engine/config/config_diff.h"

namespace normlab::gui {

std::optional<ui::ExperimentRun> MainWindow::recordedRun(size_t index) const {
    const ui::RunHistory* run = m_store.run(static_cast<int>(index));
    if (!run || !run->started || index >= m_startConfigs.size() || index >= m_runs.size())
        return std::nullopt;
    ui::ExperimentRun recorded = m_runs[index];
    recorded.config = m_startConfigs[index];
    recorded.folder = run->folder;
    recorded.changes.clear();
    for (const normlab::Event& event : run->events)
        if (event.kind == "change") recorded.changes.push_back({event.key, event.value, event.step});
    // The changes it was started with that it did not reach (stopped before their step) are still its
    // own: a run replayed, then stopped early, once lost them at the next Start.
    for (const normlab::LiveChange& planned : m_runs[index].changes)
        if (planned.at_step > run->step) recorded.changes.push_back(planned);
    return recorded;
}

namespace {
// The config a recorded run ended with: its start config with each live change applied in turn.
normlab::Config endConfigOf(const ui::ExperimentRun& run) {
    normlab::Config config = run.config;
    for (const normlab::LiveChange& change : run.changes) {
        if (change.key == "reinit_deepnorm_beta") continue;  // an action, not a setting
        try {
            normlab::apply_override(config, change.key + "=" + change.value);
        } catch (const std::exception&) {
        }
    }
    return config;
}

// The keys the controls changed for a recorded run: set to neither the value it started with nor the one
// it ended with (the controls show one or the other: its end after it trained, its start once reopened
// or started again, as it replays its changes).
QStringList editedKeys(const ui::ExperimentRun& recorded, const normlab::Config& controls) {
    const normlab::FlatConfig start = normlab::flatten_config(recorded.config);
    const normlab::FlatConfig end = normlab::flatten_config(endConfigOf(recorded));
    QStringList keys;
    for (const auto& [key, value] : normlab::flatten_config(controls))
        if (start.count(key) && end.count(key) && value != start.at(key) && value != end.at(key))
            keys << QString::fromStdString(key + "=" + value);
    return keys;
}
}  // namespace

bool MainWindow::takeRecordedRuns(const normlab::Config& edited, QString* editNote) {
    for (size_t i = 0; i < m_runs.size(); ++i) {
        std::optional<ui::ExperimentRun> recorded = recordedRun(i);
        if (!recorded) {  // not trained yet: as the controls (or the opened experiment) set it
            if (i == size_t(m_activeRun)) m_runs[i].config = edited;
            continue;
        }
        const QStringList keys = i == size_t(m_activeRun) ? editedKeys(*recorded, edited) : QStringList();
        const bool fork = recorded->fork;
        if (keys.isEmpty()) {
            m_runs[i] = *recorded;
            continue;
        }
        // Nothing recorded to lose: the edits are the run's new settings (said in the status bar).
        if (recorded->changes.empty() && !fork) {
            m_runs[i].config = edited;
            m_runs[i].changes.clear();
            *editNote =
                tr("%1 starts with your edits: %2").arg(recorded->name, keys.join(QStringLiteral(", ")));
            continue;
        }
        switch (askEditsOrRecorded(*recorded, keys, fork)) {
            case EditsOrRecorded::Cancel:
                return false;
            case EditsOrRecorded::Recorded:
                m_runs[i] = *recorded;
                break;
            case EditsOrRecorded::Edits:
                m_runs[i].config = edited;
                m_runs[i].changes.clear();
                m_runs[i].fork = false;
                // No longer its parent's branch, or what it recorded: named for what it is now.
                m_runs[i].name = defaultRunName(edited, static_cast<int>(i));
                *editNote = tr("%1 (was %2) starts from step 0 with your edits: %3")
                                .arg(m_runs[i].name, recorded->name, keys.join(QStringLiteral(", ")));
                break;
        }
    }
    return true;
}

MainWindow::EditsOrRecorded MainWindow::askEditsOrRecorded(const ui::ExperimentRun& run,
                                                           const QStringList& keys, bool fork) {
    if (m_scripted) return EditsOrRecorded::Recorded;  // nothing recorded is dropped unasked
    QStringList steps;
    for (const normlab::LiveChange& change : run.changes)
        steps << tr("%1=%2 at step %3")
                     .arg(QString::fromStdString(change.key), QString::fromStdString(change.value))
                     .arg(change.at_step);
    const QString what =
        fork ? tr("%1 is a fork: Start replays its parent's path to the fork's step, then "
                  "its own changes (%2).")
                   .arg(run.name, steps.isEmpty() ? tr("none") : steps.join(QStringLiteral("; ")))
             : tr("%1 changed live during its run (%2); Start replays those changes.")
                   .arg(run.name, steps.join(QStringLiteral("; ")));
    QMessageBox box(QMessageBox::Question, tr("Start with your edits?"),
                    what + QLatin1Char('\n') +
                        tr("Since it ran you edited %1. Start it with your edits from step 0 (its recorded "
                           "changes dropped), or as it was recorded (your edits dropped)?")
                            .arg(keys.join(QStringLiteral(", "))),
                    QMessageBox::Cancel, this);
    box.setObjectName(QStringLiteral("editsOrRecorded"));
    QPushButton* edits = box.addButton(tr("With my edits"), QMessageBox::AcceptRole);
    QPushButton* recorded = box.addButton(tr("As recorded"), QMessageBox::AcceptRole);
    box.setDefaultButton(recorded);
    box.exec();
    if (box.clickedButton() == edits) return EditsOrRecorded::Edits;
    if (box.clickedButton() == recorded) return EditsOrRecorded::Recorded;
    return EditsOrRecorded::Cancel;
}

}  // namespace normlab::gui
