// Figure building for panels, and the dialogs of export (remembered in QSettings between exports).
#include "ui/export/panel_export.h"

#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>

#include "ui/panels/chart_panel.h"

namespace normlab::ui {

namespace {
// The options last used, else the defaults (the font size follows presentation mode when not chosen).
ImageExportOptions rememberedOptions(ImageExportOptions defaults) {
    QSettings settings;
    ImageExportOptions options = defaults;
    options.size = QSize(settings.value(QStringLiteral("export/width"), defaults.size.width()).toInt(),
                         settings.value(QStringLiteral("export/height"), defaults.size.height()).toInt());
    options.dpi = settings.value(QStringLiteral("export/dpi"), defaults.dpi).toInt();
    options.fontPoints = settings.value(QStringLiteral("export/font_points"), defaults.fontPoints).toDouble();
    options.caption = settings.value(QStringLiteral("export/caption"), defaults.caption).toBool();
    options.transparent = settings.value(QStringLiteral("export/transparent"), defaults.transparent).toBool();
    return options;
}

void rememberOptions(const ImageExportOptions& options) {
    QSettings settings;
    settings.setValue(QStringLiteral("export/width"), options.size.width());
    settings.setValue(QStringLiteral("export/height"), options.size.height());
    settings.setValue(QStringLiteral("export/dpi"), options.dpi);
    settings.setValue(QStringLiteral("export/font_points"), options.fontPoints);
    settings.setValue(QStringLiteral("export/caption"), options.caption);
    settings.setValue(QStringLiteral("export/transparent"), options.transparent);
}

// A save dialog in the export folder proposing NAME.SUFFIX; empty when cancelled.
QString askPath(QWidget* parent, const QString& name, const QString& suffix) {
    const QString proposed = QDir(exportFolder()).filePath(name + QLatin1Char('.') + suffix);
    const QString path =
        QFileDialog::getSaveFileName(parent, QObject::tr("Export %1").arg(name), proposed,
                                     QStringLiteral("%1 (*.%2)").arg(suffix.toUpper(), suffix));
    if (!path.isEmpty())
        QSettings().setValue(QStringLiteral("export/folder"), QFileInfo(path).absolutePath());
    return path;
}
}  // namespace

Figure panelFigure(const ChartPanel& panel) {
    Figure figure;
    figure.title = panel.shownTitle();
    figure.caption = panel.caption();
    figure.rows = {{[&panel](const ChartStyle& style) { return panel.makeFigureChart(style); }}};
    return figure;
}

QString exportPanel(ChartPanel& panel, const QString& path, const ImageExportOptions& options) {
    if (QFileInfo(path).suffix().compare(QLatin1String("csv"), Qt::CaseInsensitive) == 0)
        return exportText(panel.csv(), path);
    return exportFigure(panelFigure(panel), path, options);
}

QString exportFolder() {
    const QString last = QSettings().value(QStringLiteral("export/folder")).toString();
    if (!last.isEmpty() && QFileInfo(last).isDir()) return last;
    const QString pictures = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
    return QFileInfo(pictures).isDir() ? pictures : QDir::homePath();
}

bool askImageOptions(QWidget* parent, ImageExportOptions& options) {
    QDialog dialog(parent);
    dialog.setWindowTitle(QObject::tr("Figure options"));
    auto* form = new QFormLayout(&dialog);
    auto* width = new QSpinBox;
    auto* height = new QSpinBox;
    auto* dpi = new QSpinBox;
    auto* font = new QDoubleSpinBox;
    width->setRange(64, 16384);
    height->setRange(64, 16384);
    dpi->setRange(36, 2400);
    font->setRange(4.0, 72.0);
    font->setDecimals(1);
    width->setValue(options.size.width());
    height->setValue(options.size.height());
    dpi->setValue(options.dpi);
    font->setValue(options.fontPoints);
    width->setSuffix(QStringLiteral(" px"));
    height->setSuffix(QStringLiteral(" px"));
    font->setSuffix(QStringLiteral(" pt"));
    auto* caption = new QCheckBox(QObject::tr("Caption naming each run's configuration"));
    caption->setChecked(options.caption);
    auto* transparent = new QCheckBox(QObject::tr("Transparent background"));
    transparent->setChecked(options.transparent);
    auto* physical = new QLabel;
    const auto showPhysical = [=] {
        physical->setText(QObject::tr("%1 x %2 cm (SVG and PDF: the same size)")
                              .arg(width->value() * 2.54 / dpi->value(), 0, 'f', 1)
                              .arg(height->value() * 2.54 / dpi->value(), 0, 'f', 1));
    };
    for (QSpinBox* box : {width, height, dpi}) QObject::connect(box, &QSpinBox::valueChanged, showPhysical);
    showPhysical();
    form->addRow(QObject::tr("Width"), width);
    form->addRow(QObject::tr("Height"), height);
    form->addRow(QObject::tr("DPI"), dpi);
    form->addRow(QString(), physical);
    form->addRow(QObject::tr("Font size"), font);
    form->addRow(QString(), caption);
    form->addRow(QString(), transparent);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(buttons);
    if (dialog.exec() != QDialog::Accepted) return false;
    options.size = QSize(width->value(), height->value());
    options.dpi = dpi->value();
    options.fontPoints = font->value();
    options.caption = caption->isChecked();
    options.transparent = transparent->isChecked();
    return true;
}

void exportFigureInteractively(const Figure& figure, const QString& name, const QString& suffix,
                               ImageExportOptions options, QWidget* dialogParent) {
    const QString path = askPath(dialogParent, name, suffix);
    if (path.isEmpty()) return;
    options = rememberedOptions(options);
    if (!askImageOptions(dialogParent, options)) return;
    rememberOptions(options);
    const QString error = exportFigure(figure, path, options);
    if (!error.isEmpty()) QMessageBox::warning(dialogParent, QObject::tr("Export failed"), error);
}

void exportPanelInteractively(ChartPanel& panel, const QString& suffix, QWidget* dialogParent) {
    if (suffix == QLatin1String("csv")) {
        const QString path = askPath(dialogParent, panel.id(), suffix);
        if (path.isEmpty()) return;
        const QString error = exportText(panel.csv(), path);
        if (!error.isEmpty()) QMessageBox::warning(dialogParent, QObject::tr("Export failed"), error);
        return;
    }
    exportFigureInteractively(panelFigure(panel), panel.id(), suffix, ImageExportOptions{}, dialogParent);
}

QPushButton* makeExportButton(QWidget* owner, const QString& name, std::function<Figure()> figure,
                              std::function<QString()> csv) {
    auto* button = new QPushButton(QObject::tr("Export"), owner);
    auto* menu = new QMenu(button);
    for (const QString& suffix : {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")})
        menu->addAction(suffix.toUpper() + QStringLiteral("..."), owner, [owner, name, figure, suffix] {
            exportFigureInteractively(figure(), name, suffix, ImageExportOptions{}, owner);
        });
    menu->addAction(QStringLiteral("CSV..."), owner, [owner, name, csv] {
        const QString path =
            QFileDialog::getSaveFileName(owner, QObject::tr("Export the data"),
                                         QDir(exportFolder()).filePath(name + QStringLiteral(".csv")));
        if (path.isEmpty()) return;
        if (const QString error = exportText(csv(), path); !error.isEmpty())
            QMessageBox::warning(owner, QObject::tr("Export failed"), error);
    });
    button->setMenu(menu);
    return button;
}

}  // namespace normlab::ui
