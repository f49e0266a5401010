// Format dispatch and the dialogs of panel export.
#include "ui/panels/panel_export.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QMessageBox>
#include <QSettings>
#include <QSpinBox>

#include "ui/panels/chart_panel.h"

namespace normlab::ui {

QString exportPanel(ChartPanel& panel, const QString& path, const ImageExportOptions& options) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("csv")) return exportText(panel.csv(), path);
    QWidget& chart = *panel.chartWidget();
    // Exports carry the chart's title; on screen the dock shows it.
    panel.setTitleShown(true);
    panel.refresh();
    const QString error = exportImage(chart, panel.title(), panel.caption(), path, options);
    panel.setTitleShown(false);
    panel.refresh();
    return error;
}

bool askImageOptions(QWidget* parent, ImageExportOptions& options) {
    QDialog dialog(parent);
    dialog.setWindowTitle(QObject::tr("PNG export"));
    auto* form = new QFormLayout(&dialog);
    auto* width = new QSpinBox;
    auto* height = new QSpinBox;
    auto* dpi = new QSpinBox;
    width->setRange(64, 16384);
    height->setRange(64, 16384);
    dpi->setRange(36, 2400);
    width->setValue(options.size.width());
    height->setValue(options.size.height());
    dpi->setValue(options.dpi);
    width->setSuffix(QStringLiteral(" px"));
    height->setSuffix(QStringLiteral(" px"));
    form->addRow(QObject::tr("Width"), width);
    form->addRow(QObject::tr("Height"), height);
    form->addRow(QObject::tr("DPI"), dpi);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(buttons);
    if (dialog.exec() != QDialog::Accepted) return false;
    options.size = QSize(width->value(), height->value());
    options.dpi = dpi->value();
    return true;
}

void exportPanelInteractively(ChartPanel& panel, const QString& suffix, QWidget* dialogParent) {
    QSettings settings;
    const QString folder =
        settings.value(QStringLiteral("export/folder"), panel.defaultExportFolder()).toString();
    const QString proposed = QDir(folder).filePath(panel.id() + QLatin1Char('.') + suffix);
    const QString path =
        QFileDialog::getSaveFileName(dialogParent, QObject::tr("Export %1").arg(panel.title()), proposed,
                                     QStringLiteral("%1 (*.%2)").arg(suffix.toUpper(), suffix));
    if (path.isEmpty()) return;
    ImageExportOptions options;
    options.size = QSize(settings.value(QStringLiteral("export/width"), 1600).toInt(),
                         settings.value(QStringLiteral("export/height"), 1000).toInt());
    options.dpi = settings.value(QStringLiteral("export/dpi"), 200).toInt();
    if (suffix == QLatin1String("png")) {
        if (!askImageOptions(dialogParent, options)) return;
        settings.setValue(QStringLiteral("export/width"), options.size.width());
        settings.setValue(QStringLiteral("export/height"), options.size.height());
        settings.setValue(QStringLiteral("export/dpi"), options.dpi);
    }
    settings.setValue(QStringLiteral("export/folder"), QFileInfo(path).absolutePath());
    const QString error = exportPanel(panel, path, options);
    if (!error.isEmpty()) QMessageBox::warning(dialogParent, QObject::tr("Export failed"), error);
}

}  // namespace normlab::ui
