// NewSweepDialog: a form over the engine's key table; planning reuses plan_sweep / write_sweep, and
// running is the CLI's own `sweep run` (the same engine and the same folder contract as a script).
#include "app/gui/new_sweep_dialog.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <thread>

#include "engine/config/config_keys.h"
#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/sweep/sweep_folder.h"
#include "engine/sweep/sweep_path_policy.h"

namespace normlab::gui {

NewSweepDialog::NewSweepDialog(const normlab::Config& base, const QString& runsRoot, QWidget* parent)
    : QDialog(parent), m_base(base) {
    setWindowTitle(tr("New sweep over the current settings"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(
        new QLabel(tr("Every combination of the values below is a run of the current settings "
                      "(comma-separated values; leave a row empty to skip it).")));
    auto* form = new QFormLayout;
    layout->addLayout(form);
    const QStringList defaults[kAxisRows][2] = {
        {QStringList{QStringLiteral("train.lr"), QStringLiteral("1e-3, 3e-3, 1e-2")}},
        {QStringList{QStringLiteral("train.warmup_steps"), QStringLiteral("0, 150")}},
        {QStringList{QString(), QString()}}};
    for (int row = 0; row < kAxisRows; ++row) {
        auto* key = new QComboBox;
        key->addItem(QString());
        for (const std::string& name : normlab::config_keys())
            if (name != "device" && name != "threads" && name != "train.seed")
                key->addItem(QString::fromStdString(name));
        key->setCurrentText(defaults[row][0].value(0));
        auto* values = new QLineEdit(defaults[row][0].value(1));
        auto* line = new QHBoxLayout;
        line->addWidget(key, 1);
        line->addWidget(values, 2);
        form->addRow(tr("Axis %1").arg(row + 1), line);
        m_keys.push_back(key);
        m_values.push_back(values);
    }
    m_seeds = new QSpinBox;
    m_seeds->setRange(1, 100);
    m_steps = new QSpinBox;
    m_steps->setRange(1, 10'000'000);
    m_steps->setValue(base.train.steps);
    m_jobs = new QSpinBox;
    m_jobs->setRange(1, 256);
    m_jobs->setValue(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    m_jobs->setToolTip(tr("Runs at once, one thread each (faster per point than one run using every core)"));
    m_folder = new QLineEdit(QDir(runsRoot).filePath(
        QStringLiteral("sweep-") + QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))));
    form->addRow(tr("Seeds"), m_seeds);
    form->addRow(tr("Steps per run"), m_steps);
    form->addRow(tr("Runs at once"), m_jobs);
    form->addRow(tr("Sweep folder"), m_folder);
    m_problem = new QLabel;
    m_problem->setStyleSheet(QStringLiteral("color: #b00020"));
    m_problem->setWordWrap(true);
    layout->addWidget(m_problem);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Plan and run"));
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        if (planAndStart().isEmpty()) accept();
    });
}

void NewSweepDialog::setAxis(int row, const QString& key, const QString& values) {
    m_keys.at(row)->setCurrentText(key);
    m_values.at(row)->setText(values);
}
void NewSweepDialog::setSeeds(int seeds) {
    m_seeds->setValue(seeds);
}
void NewSweepDialog::setSteps(int steps) {
    m_steps->setValue(steps);
}
void NewSweepDialog::setJobs(int jobs) {
    m_jobs->setValue(jobs);
}
void NewSweepDialog::setFolder(const QString& folder) {
    m_folder->setText(folder);
}
QString NewSweepDialog::folder() const {
    return m_folder->text().trimmed();
}
QString NewSweepDialog::problem() const {
    return m_problem->text();
}

normlab::SweepSpec NewSweepDialog::spec(const std::string& baseConfigPath) const {
    nlohmann::ordered_json json = {{"base", {{"config", baseConfigPath}}},
                                   {"axes", nlohmann::ordered_json::object()}};
    for (int row = 0; row < kAxisRows; ++row) {
        const QString key = m_keys[row]->currentText().trimmed();
        const QString values = m_values[row]->text().trimmed();
        if (key.isEmpty() && values.isEmpty()) continue;
        if (key.isEmpty())
            throw normlab::InputError("axis " + std::to_string(row + 1) + " has values but no key");
        json["axes"][key.toStdString()] = normlab::values_from_text(values.toStdString());
    }
    json["seeds"] = m_seeds->value();
    json["steps"] = m_steps->value();
    return normlab::sweep_spec_from_json(json);
}

QString NewSweepDialog::cliProgram() {
    const QString chosen = qEnvironmentVariable("NORMLAB_CLI");
    return chosen.isEmpty()
               ? QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("normlab-cli"))
               : chosen;
}

QString NewSweepDialog::planAndStart() {
    const QString dir = folder();
    QString problem;
    bool created = false;
    try {
        if (dir.isEmpty()) throw normlab::InputError("choose a folder for the sweep");
        if (QFileInfo::exists(dir) && !QDir(dir).isEmpty())
            throw normlab::InputError(dir.toStdString() + " already holds files; choose a new folder");
        if (!QFileInfo(cliProgram()).isExecutable())
            throw normlab::InputError("the sweep runs with " + cliProgram().toStdString() +
                                      ", which is missing; install normlab-cli beside normlab");
        created = !QFileInfo::exists(dir);
        QDir().mkpath(dir);
        const std::string base = QDir(dir).absoluteFilePath(QStringLiteral("base_config.json")).toStdString();
        normlab::write_file_atomically(base, normlab::config_to_json_text(m_base) + "\n");
        normlab::SweepPlan plan = normlab::plan_sweep(spec(base));
        plan.paths_from_command_line = normlab::sweep_path_keys();  // the window's own config chose them
        normlab::write_sweep(dir.toStdString(), plan);
        if (!QProcess::startDetached(
                cliProgram(), {QStringLiteral("sweep"), QStringLiteral("run"), dir, QStringLiteral("--jobs"),
                               QString::number(m_jobs->value()), QStringLiteral("--quiet")}))
            throw normlab::InputError("could not start " + cliProgram().toStdString());
    } catch (const normlab::InputError& error) {
        problem = QString::fromStdString(error.what());
        // Nothing half-planned stays behind: the same folder can be used once the form is fixed.
        QFile::remove(QDir(dir).filePath(QStringLiteral("base_config.json")));
        if (created) QDir().rmdir(dir);
    }
    m_problem->setText(problem);
    return problem;
}

}  // namespace normlab::gui
