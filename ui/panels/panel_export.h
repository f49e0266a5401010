// Exporting a ChartPanel by file suffix (png/svg/pdf/csv), without dialogs (tests, scripts) or with
// them (context menu: file dialog, size/DPI for PNG, a message box naming any failure).
#pragma once
#include <QString>

#include "ui/panels/chart_export.h"

namespace normlab::ui {

class ChartPanel;

// Writes the panel to `path`, the format chosen by its suffix. Returns an error message, empty on success.
QString exportPanel(ChartPanel& panel, const QString& path, const ImageExportOptions& options = {});
// Asks for a path (and PNG size/DPI), exports, reports failure in a dialog.
void exportPanelInteractively(ChartPanel& panel, const QString& suffix, QWidget* dialogParent);
// The PNG size/DPI dialog; false when cancelled.
bool askImageOptions(QWidget* parent, ImageExportOptions& options);

}  // namespace normlab::ui
