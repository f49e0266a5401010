// ForkPointsDialog: three spin boxes in a form; the settings under "forkPoints/" in QSettings.
#include "app/gui/fork_points_dialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QSettings>
#include <QSpinBox>

namespace normlab::gui {

namespace {
constexpr size_t kMegabyte = size_t{1} << 20;
}

normlab::SnapshotSettings forkPointSettings() {
    const normlab::SnapshotSettings defaults;
    QSettings saved;
    normlab::SnapshotSettings settings;
    settings.every = saved.value(QStringLiteral("forkPoints/every"), qint64(defaults.every)).toLongLong();
    settings.keep = saved.value(QStringLiteral("forkPoints/keep"), defaults.keep).toInt();
    settings.max_bytes =
        saved.value(QStringLiteral("forkPoints/megabytes"), qulonglong(defaults.max_bytes / kMegabyte))
            .toULongLong() *
        kMegabyte;
    return settings;
}

void saveForkPointSettings(const normlab::SnapshotSettings& settings) {
    QSettings saved;
    saved.setValue(QStringLiteral("forkPoints/every"), qint64(settings.every));
    saved.setValue(QStringLiteral("forkPoints/keep"), settings.keep);
    saved.setValue(QStringLiteral("forkPoints/megabytes"), qulonglong(settings.max_bytes / kMegabyte));
}

ForkPointsDialog::ForkPointsDialog(const normlab::SnapshotSettings& settings, QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Fork points"));
    auto* form = new QFormLayout(this);
    auto* about = new QLabel(
        tr("Each run trained here keeps its whole state in memory every few steps, so a chart's pinned "
           "readout can fork it at an earlier step (right-click the chart). The Runs panel shows the "
           "steps kept and their memory. Changes apply from the next step."));
    about->setWordWrap(true);
    form->addRow(about);
    m_every = new QSpinBox;
    m_every->setObjectName(QStringLiteral("forkPointsEvery"));
    m_every->setRange(0, 1000000);
    m_every->setSpecialValueText(tr("never"));
    m_every->setValue(static_cast<int>(settings.every));
    m_keep = new QSpinBox;
    m_keep->setObjectName(QStringLiteral("forkPointsKeep"));
    m_keep->setRange(1, 10000);
    m_keep->setValue(settings.keep);
    m_megabytes = new QSpinBox;
    m_megabytes->setObjectName(QStringLiteral("forkPointsMegabytes"));
    m_megabytes->setRange(1, 1 << 20);
    m_megabytes->setSuffix(tr(" MB per run"));
    m_megabytes->setValue(static_cast<int>(settings.max_bytes / kMegabyte));
    form->addRow(tr("Keep the state every (steps)"), m_every);
    form->addRow(tr("The newest"), m_keep);
    form->addRow(tr("Within"), m_megabytes);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    form->addRow(buttons);
}

normlab::SnapshotSettings ForkPointsDialog::settings() const {
    return {m_every->value(), m_keep->value(), static_cast<size_t>(m_megabytes->value()) * kMegabyte};
}

}  // namespace normlab::gui
