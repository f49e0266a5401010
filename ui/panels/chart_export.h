// Export of a chart (or the whole dashboard) to PNG at a chosen size and DPI, SVG, PDF, and CSV.
// Images carry the chart as drawn (title, axes, legend) with a caption band naming the configuration.
#pragma once
#include <QSize>
#include <QString>
#include <QWidget>

namespace normlab::ui {

struct ImageExportOptions {
    QSize size{1600, 1000};  // pixels of the chart part (PNG); points for SVG/PDF
    int dpi = 200;
};

// Each throws nothing; returns an error message, empty on success. Nothing is written on error.
QString exportPng(QWidget& chart, const QString& caption, const QString& path,
                  const ImageExportOptions& options);
QString exportSvg(QWidget& chart, const QString& title, const QString& caption, const QString& path);
QString exportPdf(QWidget& chart, const QString& caption, const QString& path);
QString exportText(const QString& text, const QString& path);
// PNG, SVG or PDF by the path's suffix (anything else: an error naming the formats).
QString exportImage(QWidget& chart, const QString& title, const QString& caption, const QString& path,
                    const ImageExportOptions& options);

// The export formats by file suffix, for save dialogs: "png", "svg", "pdf", "csv".
QString exportFilter();

}  // namespace normlab::ui
