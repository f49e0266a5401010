// Rendering widgets onto a QImage / QSvgGenerator / QPdfWriter with a caption band below, each
// written to a temporary file first and renamed, so a failed export never leaves a partial file.
#include "ui/panels/chart_export.h"

#include <QBuffer>
#include <QFileInfo>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QTextDocument>
#include <cmath>

namespace normlab::ui {

namespace {
// Draws the widget scaled into `target` and the caption in the band below it.
void paintWithCaption(QPainter& painter, QWidget& chart, const QString& caption, const QRectF& target,
                      double captionHeight) {
    const QSize source = chart.size();
    painter.save();
    painter.translate(target.topLeft());
    painter.scale(target.width() / source.width(), (target.height() - captionHeight) / source.height());
    chart.render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
    painter.restore();
    if (caption.isEmpty()) return;
    QFont font = painter.font();
    font.setPixelSize(
        std::max(10, static_cast<int>(captionHeight / (caption.count(QLatin1Char('\n')) + 2.2))));
    painter.setFont(font);
    painter.setPen(QColor(60, 60, 60));
    painter.drawText(
        QRectF(target.left() + 8, target.bottom() - captionHeight, target.width() - 16, captionHeight),
        Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, caption);
}

double captionHeightFor(const QString& caption, double height) {
    if (caption.isEmpty()) return 0.0;
    return std::min(height * 0.3, height * 0.045 * (caption.count(QLatin1Char('\n')) + 2));
}

QString writeBytes(const QByteArray& bytes, const QString& path) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
    file.write(bytes);
    if (!file.commit()) return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
    return {};
}
}  // namespace

QString exportPng(QWidget& chart, const QString& caption, const QString& path,
                  const ImageExportOptions& options) {
    if (options.size.width() < 64 || options.size.height() < 64 || options.size.width() > 16384 ||
        options.size.height() > 16384)
        return QStringLiteral("image size %1x%2 is out of range: use 64..16384 pixels per side")
            .arg(options.size.width())
            .arg(options.size.height());
    if (options.dpi < 36 || options.dpi > 2400)
        return QStringLiteral("DPI %1 is out of range: use 36..2400").arg(options.dpi);
    const double captionHeight = captionHeightFor(caption, options.size.height());
    QImage image(options.size.width(), options.size.height() + static_cast<int>(captionHeight),
                 QImage::Format_ARGB32);
    image.fill(Qt::white);
    const int dotsPerMeter = static_cast<int>(std::lround(options.dpi / 0.0254));
    image.setDotsPerMeterX(dotsPerMeter);
    image.setDotsPerMeterY(dotsPerMeter);
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::TextAntialiasing);
        paintWithCaption(painter, chart, caption, QRectF(0, 0, image.width(), image.height()), captionHeight);
    }
    QByteArray bytes;
    {
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        if (!image.save(&buffer, "PNG")) return QStringLiteral("cannot encode the PNG image");
    }
    return writeBytes(bytes, path);
}

QString exportSvg(QWidget& chart, const QString& title, const QString& caption, const QString& path) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    const QSize size = chart.size();
    const double captionHeight = captionHeightFor(caption, size.height());
    QSvgGenerator generator;
    generator.setOutputDevice(&buffer);
    generator.setSize(QSize(size.width(), size.height() + static_cast<int>(captionHeight)));
    generator.setViewBox(QRect(0, 0, size.width(), size.height() + static_cast<int>(captionHeight)));
    generator.setTitle(title);
    generator.setDescription(caption);
    {
        QPainter painter(&generator);
        paintWithCaption(painter, chart, caption, QRectF(0, 0, size.width(), size.height() + captionHeight),
                         captionHeight);
    }
    return writeBytes(bytes, path);
}

QString exportPdf(QWidget& chart, const QString& caption, const QString& path) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    {
        QPdfWriter writer(&buffer);
        const QSize size = chart.size();
        const double captionHeight = captionHeightFor(caption, size.height());
        writer.setPageSize(QPageSize(QSizeF(size.width(), size.height() + captionHeight), QPageSize::Point));
        writer.setPageMargins(QMarginsF(0, 0, 0, 0));
        writer.setResolution(144);
        writer.setTitle(chart.windowTitle());
        writer.setCreator(QStringLiteral("NormLab"));
        QPainter painter(&writer);
        const QRect page = painter.viewport();
        paintWithCaption(painter, chart, caption, QRectF(page),
                         captionHeight * page.height() / (size.height() + captionHeight));
    }
    return writeBytes(bytes, path);
}

QString exportText(const QString& text, const QString& path) {
    return writeBytes(text.toUtf8(), path);
}

QString exportImage(QWidget& chart, const QString& title, const QString& caption, const QString& path,
                    const ImageExportOptions& options) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png")) return exportPng(chart, caption, path, options);
    if (suffix == QLatin1String("svg")) return exportSvg(chart, title, caption, path);
    if (suffix == QLatin1String("pdf")) return exportPdf(chart, caption, path);
    return QStringLiteral("unknown export format '.%1': use .png, .svg, .pdf or .csv").arg(suffix);
}

QString exportFilter() {
    return QStringLiteral(
        "PNG image (*.png);;SVG vector image (*.svg);;PDF document (*.pdf);;CSV data (*.csv)");
}

}  // namespace normlab::ui
