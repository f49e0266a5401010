// Figures for papers and slides: one chart or a grid of them, with their titles, axes and legends, and
// the caption under them, at exactly the asked pixel size and DPI (PNG) or the same physical size (SVG,
// PDF), in a chosen font size, on an opaque background unless transparency is asked. Charts are drawn
// afresh for the figure (never the on-screen widgets, so no selector or dock button appears in it).
#pragma once
#include <QSize>
#include <QString>
#include <QWidget>
#include <functional>
#include <memory>
#include <vector>

#include "ui/plots/chart_style.h"
#include "ui/plots/plot_content.h"

namespace normlab::ui {

struct ImageExportOptions {
    QSize size{1600,
               1000};  // the whole figure, caption included: pixels at `dpi` (SVG/PDF: size / dpi inches)
    int dpi = 200;
    double fontPoints = 9.0;  // the figure's base font size; presentation mode suggests kPresentationPoints
    bool caption = true;      // draw the caption naming the runs' configurations
    bool oneLineCaption = false;  // only the caption's first line ("Differs: ..." or the one run's summary)
    bool transparent = false;

    static constexpr double kPresentationPoints = 15.0;
    // A slide: 1920x1080 pixels at 96 DPI, 18 pt fonts, a one-line caption (normlab-cli export --preset
    // slide).
    static ImageExportOptions slide() {
        ImageExportOptions options;
        options.size = QSize(1920, 1080);
        options.dpi = 96;
        options.fontPoints = 18.0;
        options.oneLineCaption = true;
        return options;
    }
};

// Makes a chart widget drawn in `style`, with its title shown, owned by the caller.
using FigureChartFactory = std::function<std::unique_ptr<QWidget>(const ChartStyle& style)>;

// A figure's line chart: a LinePlot titled `title` drawing `content` in the figure's style.
FigureChartFactory linePlotFigure(const QString& title, const PlotContent& content);

struct Figure {
    QString title;    // the file's title (SVG and PDF metadata)
    QString caption;  // drawn under the charts unless options.caption is false
    // Rows of charts, top to bottom: rows share the height equally, a row's charts its width.
    std::vector<std::vector<FigureChartFactory>> rows;
};

// The options' error, or empty when they are in range.
QString checkImageOptions(const ImageExportOptions& options);
// Writes `figure` as PNG, SVG or PDF by the path's suffix. Returns an error message, empty on success;
// nothing is written on error (files are written whole or not at all).
QString exportFigure(const Figure& figure, const QString& path, const ImageExportOptions& options);
QString exportText(const QString& text, const QString& path);

// The export formats by file suffix, for save dialogs: "png", "svg", "pdf", "csv".
QString exportFilter();

}  // namespace normlab::ui
