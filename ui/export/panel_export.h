// Exporting charts by file suffix (png/svg/pdf/csv): a panel or the whole dashboard as a figure, without
// dialogs (tests, scripts) or with them (file dialog starting in the last export folder, the figure
// options dialog, a message box naming any failure).
#pragma once
#include <QString>
#include <functional>

#include "ui/export/chart_export.h"

class QPushButton;
class QWidget;

namespace normlab::ui {

class ChartPanel;

// The figure of one panel: its chart with title, and the caption naming the visible runs.
Figure panelFigure(const ChartPanel& panel);
// Writes the panel to `path`, the format chosen by its suffix. Returns an error message, empty on success.
QString exportPanel(ChartPanel& panel, const QString& path, const ImageExportOptions& options = {});
// Asks for a path (and the figure options for images), exports, reports failure in a dialog.
void exportPanelInteractively(ChartPanel& panel, const QString& suffix, QWidget* dialogParent);
// Asks for a path and the figure options, then writes `figure`; failures in a dialog.
void exportFigureInteractively(const Figure& figure, const QString& name, const QString& suffix,
                               ImageExportOptions options, QWidget* dialogParent);
// An "Export" button for a window of its own (a stability map, an edge chart): PNG, SVG and PDF of
// `figure()` through exportFigureInteractively, CSV of `csv()`, files named after `name`.
QPushButton* makeExportButton(QWidget* owner, const QString& name, std::function<Figure()> figure,
                              std::function<QString()> csv);
// The figure options dialog (size, DPI, font size, caption, transparency); false when cancelled.
bool askImageOptions(QWidget* parent, ImageExportOptions& options);
// Where export dialogs start: the last export folder, else the user's Pictures folder.
QString exportFolder();

}  // namespace normlab::ui
