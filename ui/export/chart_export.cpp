// Figure layout and its three image formats. Everything is laid out on a canvas in 96-DPI pixels (the
// unit widgets lay out in): the asked size times 96 / dpi. A PNG paints the canvas scaled up to exactly
// the asked pixels; SVG and PDF use the canvas as their user space at 96 DPI, so all three have the
// same physical size and the same text metrics, and glyphs are never stretched.
#include "ui/export/chart_export.h"

#include "ui/io/whole_file.h"
#include "ui/plots/line_plot.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QFileInfo>
#include <QPainter>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSvgGenerator>
#include <cmath>
#include <memory>
#include <vector>

namespace normlab::ui {

namespace {
constexpr double kCanvasDpi = 96.0;
constexpr double kMaxCaptionShare = 0.5;  // of the figure's height

QSizeF canvasSize(const ImageExportOptions& options) {
    return QSizeF(options.size) * (kCanvasDpi / options.dpi);
}

ChartStyle styleFor(const ImageExportOptions& options) {
    return ChartStyle{options.fontPoints / ChartStyle::kBasePointSize, !options.transparent};
}

QFont captionFont(const ImageExportOptions& options) {
    QFont font;
    font.setPointSizeF(options.fontPoints);
    return font;
}

// The caption as drawn: all of it, its first line, or none.
QString captionText(const Figure& figure, const ImageExportOptions& options) {
    if (!options.caption) return {};
    return options.oneLineCaption ? figure.caption.section(QLatin1Char('\n'), 0, 0) : figure.caption;
}

// The caption's wrapped text box on the canvas, or an empty rectangle without a caption.
QRectF captionBox(const Figure& figure, const ImageExportOptions& options, QPaintDevice* device) {
    const QString caption = captionText(figure, options);
    if (caption.isEmpty()) return {};
    const QSizeF canvas = canvasSize(options);
    const double margin = 6.0 * styleFor(options).fontScale;
    const QFontMetricsF metrics(captionFont(options), device);
    const QRectF text = metrics.boundingRect(QRectF(0, 0, canvas.width() - 2 * margin, 1e6),
                                             Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, caption);
    return QRectF(margin, canvas.height() - text.height() - margin, canvas.width() - 2 * margin,
                  text.height());
}

// A detached chart laid out at `cell`'s size in canvas pixels (shown off screen, so QtCharts lays it
// out). It comes out taller than the cell when its axes, title and legend need more room.
std::unique_ptr<QWidget> layOutChart(const FigureChartFactory& make, const ChartStyle& style,
                                     const QRectF& cell) {
    std::unique_ptr<QWidget> chart = make(style);
    // The on-screen minimum (a usable chart in a dock) does not bind a figure's cell: the plot area
    // gives way first. Only what cannot shrink (axes, title, legend) can make it taller than the cell.
    chart->setMinimumSize(0, 0);
    chart->setAttribute(Qt::WA_DontShowOnScreen);
    chart->resize(cell.size().toSize());
    chart->show();
    // QtCharts lays out through posted events, some posted while handling others.
    for (int pass = 0; pass < 4; ++pass) {
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
    }
    return chart;
}

// Each chart's cell, row by row, above the caption (when there is one).
std::vector<std::vector<QRectF>> chartCells(const Figure& figure, const ImageExportOptions& options,
                                            QPaintDevice* device) {
    const QSizeF canvas = canvasSize(options);
    const QRectF caption = captionBox(figure, options, device);
    const double chartsHeight =
        caption.isEmpty() ? canvas.height() : caption.top() - 6.0 * styleFor(options).fontScale;
    const double rowHeight = std::floor(chartsHeight / std::max<size_t>(figure.rows.size(), 1));
    std::vector<std::vector<QRectF>> cells;
    for (size_t r = 0; r < figure.rows.size(); ++r) {
        const double width = std::floor(canvas.width() / std::max<size_t>(figure.rows[r].size(), 1));
        cells.emplace_back();
        for (size_t c = 0; c < figure.rows[r].size(); ++c)
            cells.back().emplace_back(c * width, r * rowHeight, width, rowHeight);
    }
    return cells;
}

void paintFigure(QPainter& painter, const Figure& figure, const ImageExportOptions& options) {
    const QSizeF canvas = canvasSize(options);
    const ChartStyle style = styleFor(options);
    if (style.opaque) painter.fillRect(QRectF(QPointF(0, 0), canvas), Qt::white);
    const QWidget::RenderFlags flags =
        style.opaque ? QWidget::DrawWindowBackground | QWidget::DrawChildren : QWidget::DrawChildren;
    const std::vector<std::vector<QRectF>> cells = chartCells(figure, options, painter.device());
    for (size_t r = 0; r < cells.size(); ++r)
        for (size_t c = 0; c < cells[r].size(); ++c)
            layOutChart(figure.rows[r][c], style, cells[r][c])
                ->render(&painter, cells[r][c].topLeft().toPoint(), QRegion(), flags);
    const QRectF caption = captionBox(figure, options, painter.device());
    if (caption.isEmpty()) return;
    painter.setFont(captionFont(options));
    painter.setPen(QColor(40, 40, 40));
    painter.drawText(caption, Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, captionText(figure, options));
}

// The caption must leave the charts room and each chart must fit its cell: an error saying what to
// change, or empty.
QString checkFigureFits(const Figure& figure, const ImageExportOptions& options) {
    QImage probe(1, 1, QImage::Format_ARGB32);  // 96 DPI, like the canvas
    const QRectF caption = captionBox(figure, options, &probe);
    if (caption.height() > canvasSize(options).height() * kMaxCaptionShare)
        return QStringLiteral(
                   "the caption needs %1% of the figure's height at %2 pt (it may take %3%): make the "
                   "figure taller, the font smaller, or leave the caption out")
            .arg(100.0 * caption.height() / canvasSize(options).height(), 0, 'f', 0)
            .arg(options.fontPoints)
            .arg(100.0 * kMaxCaptionShare, 0, 'f', 0);
    // Every chart fits its cell: one laid out taller would be drawn over the caption or the next row.
    const std::vector<std::vector<QRectF>> cells = chartCells(figure, options, &probe);
    for (size_t r = 0; r < cells.size(); ++r)
        for (size_t c = 0; c < cells[r].size(); ++c) {
            const int needs = layOutChart(figure.rows[r][c], styleFor(options), cells[r][c])->height();
            if (needs > cells[r][c].height() + 0.5)
                return QStringLiteral(
                           "a chart needs %1 px of height at %2 pt but the figure leaves it %3 px: make the "
                           "figure taller, the font smaller, or leave the caption out")
                    .arg(needs)
                    .arg(options.fontPoints)
                    .arg(std::floor(cells[r][c].height()));
        }
    return {};
}

QString writeBytes(const QByteArray& bytes, const QString& path) {
    return writeWholeFile(path, bytes);
}

QByteArray png(const Figure& figure, const ImageExportOptions& options) {
    QImage image(options.size, QImage::Format_ARGB32_Premultiplied);
    image.fill(options.transparent ? Qt::transparent : Qt::white);
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::TextAntialiasing);
        painter.scale(options.dpi / kCanvasDpi, options.dpi / kCanvasDpi);
        paintFigure(painter, figure, options);
    }
    // The DPI is recorded after painting: fonts were sized on the 96-DPI canvas, then scaled.
    const int dotsPerMeter = static_cast<int>(std::lround(options.dpi / 0.0254));
    image.setDotsPerMeterX(dotsPerMeter);
    image.setDotsPerMeterY(dotsPerMeter);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    return image.save(&buffer, "PNG") ? bytes : QByteArray();
}

// Every font named with the CSS generic family behind it ("DejaVu Sans, sans-serif"): slide software
// without the font then falls back to a sans-serif, not to a serif.
QByteArray withGenericFontFamily(const QByteArray& svg) {
    static const QRegularExpression family(QStringLiteral("font-family=\"([^\",]+)\""));
    return QString::fromUtf8(svg).replace(family, QStringLiteral("font-family=\"\\1, sans-serif\"")).toUtf8();
}

QByteArray svg(const Figure& figure, const ImageExportOptions& options) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    const QSizeF canvas = canvasSize(options);
    QSvgGenerator generator;
    generator.setOutputDevice(&buffer);
    generator.setResolution(static_cast<int>(kCanvasDpi));
    generator.setSize(canvas.toSize());
    generator.setViewBox(QRectF(QPointF(0, 0), canvas));
    generator.setTitle(figure.title);
    generator.setDescription(captionText(figure, options));
    QPainter painter(&generator);
    paintFigure(painter, figure, options);
    painter.end();
    return withGenericFontFamily(bytes);
}

QByteArray pdf(const Figure& figure, const ImageExportOptions& options) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QPdfWriter writer(&buffer);
    writer.setResolution(static_cast<int>(kCanvasDpi));
    writer.setPageSize(QPageSize(QSizeF(options.size) * (72.0 / options.dpi), QPageSize::Point));
    writer.setPageMargins(QMarginsF(0, 0, 0, 0));
    writer.setTitle(figure.title);
    writer.setCreator(QStringLiteral("NormLab"));
    QPainter painter(&writer);
    paintFigure(painter, figure, options);
    painter.end();
    return bytes;
}
}  // namespace

QString checkImageOptions(const ImageExportOptions& options) {
    if (options.size.width() < 64 || options.size.height() < 64 || options.size.width() > 16384 ||
        options.size.height() > 16384)
        return QStringLiteral("image size %1x%2 is out of range: use 64..16384 pixels per side")
            .arg(options.size.width())
            .arg(options.size.height());
    if (options.dpi < 36 || options.dpi > 2400)
        return QStringLiteral("DPI %1 is out of range: use 36..2400").arg(options.dpi);
    if (!(options.fontPoints >= 4.0 && options.fontPoints <= 72.0))
        return QStringLiteral("font size %1 pt is out of range: use 4..72").arg(options.fontPoints);
    return {};
}

QString exportFigure(const Figure& figure, const QString& path, const ImageExportOptions& options) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("png") && suffix != QLatin1String("svg") && suffix != QLatin1String("pdf"))
        return QStringLiteral("unknown export format '.%1': use .png, .svg, .pdf or .csv").arg(suffix);
    if (QString error = checkImageOptions(options); !error.isEmpty()) return error;
    if (QString error = checkFigureFits(figure, options); !error.isEmpty()) return error;
    const QByteArray bytes = suffix == QLatin1String("png")   ? png(figure, options)
                             : suffix == QLatin1String("svg") ? svg(figure, options)
                                                              : pdf(figure, options);
    if (bytes.isEmpty()) return QStringLiteral("cannot encode the %1 image").arg(suffix.toUpper());
    return writeBytes(bytes, path);
}

QString exportText(const QString& text, const QString& path) {
    return writeBytes(text.toUtf8(), path);
}

QString exportFilter() {
    return QStringLiteral(
        "PNG image (*.png);;SVG vector image (*.svg);;PDF document (*.pdf);;CSV data (*.csv)");
}

FigureChartFactory linePlotFigure(const QString& title, const PlotContent& content) {
    return [title, content](const ChartStyle& style) {
        auto plot = std::make_unique<LinePlot>(title);
        plot->setStyle(style);
        plot->setTitleShown(true);
        plot->setContent(content);
        return std::unique_ptr<QWidget>(std::move(plot));
    };
}

}  // namespace normlab::ui
