// File > New sweep: a sweep over the current settings. The user picks up to three keys with their
// values, the seeds, the steps, the parallel jobs and the folder; OK plans the sweep there (every
// point validated first; a problem is shown in the dialog, which stays open) and starts
// `normlab-cli sweep run` as a process of its own, so the window never waits and the sweep goes on
// if the window closes (running the same command again finishes it).
#pragma once
#include <QDialog>
#include <vector>

#include "engine/config/config.h"
#include "engine/sweep/sweep_plan.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace normlab::gui {

class NewSweepDialog : public QDialog {
    Q_OBJECT
  public:
    static constexpr int kAxisRows = 3;
    NewSweepDialog(const normlab::Config& base, const QString& runsRoot, QWidget* parent = nullptr);

    // The form, for scripts and tests: an axis row's key and comma-separated values ("" to drop it).
    void setAxis(int row, const QString& key, const QString& values);
    void setSeeds(int seeds);
    void setSteps(int steps);
    void setJobs(int jobs);
    void setFolder(const QString& folder);
    QString folder() const;
    QString problem() const;  // the message shown in the dialog after a failed OK, or empty

    // The spec the form describes over `baseConfigPath`. Throws normlab::InputError naming the field.
    normlab::SweepSpec spec(const std::string& baseConfigPath) const;
    // Plans into folder() and starts the workers: the problem, or empty on success (then accepted).
    QString planAndStart();
    // The normlab-cli that runs sweeps: $NORMLAB_CLI, else the one beside this program.
    static QString cliProgram();

  private:
    normlab::Config m_base;
    std::vector<QComboBox*> m_keys;
    std::vector<QLineEdit*> m_values;
    QSpinBox *m_seeds = nullptr, *m_steps = nullptr, *m_jobs = nullptr;
    QLineEdit* m_folder = nullptr;
    QLabel* m_problem = nullptr;
};

}  // namespace normlab::gui
