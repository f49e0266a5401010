// CSV formatting shared by every chart panel.
#include "ui/export/plot_csv.h"

#include <QLocale>
#include <QStringList>

namespace normlab::ui {

QString csvField(const QString& text) {
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) &&
        !text.contains(QLatin1Char('\n')))
        return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

namespace {
QString commentLines(const QString& title, const QString& caption) {
    QString text = QStringLiteral("# %1\n").arg(title);
    for (const QString& line : caption.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        text += QStringLiteral("# %1\n").arg(line);
    return text;
}
}  // namespace

QString csvFromPlot(const QString& title, const PlotContent& content, const QString& caption) {
    QString text =
        commentLines(title, content.note.isEmpty() ? caption : caption + QLatin1Char('\n') + content.note);
    text += QStringLiteral("# x: %1; y: %2%3\n")
                .arg(content.x.title, content.y.title,
                     content.y2 ? QStringLiteral("; y2: ") + content.y2->title : QString());
    text += QStringLiteral("series,axis,x,y\n");
    const auto rows = [&](const QString& name, const QString& axis, const QVector<QPointF>& points) {
        for (const QPointF& p : points)
            text += QStringLiteral("%1,%2,%3,%4\n")
                        .arg(csvField(name), axis)
                        .arg(p.x(), 0, 'g', QLocale::FloatingPointShortest)
                        .arg(p.y(), 0, 'g', QLocale::FloatingPointShortest);
    };
    for (const PlotSeries& series : content.series)
        rows(series.name, series.onSecondaryAxis ? QStringLiteral("y2") : QStringLiteral("y"), series.points);
    for (const PlotBand& band : content.bands) {
        rows(band.name + QStringLiteral(" (lower)"), QStringLiteral("y"), band.lower);
        rows(band.name + QStringLiteral(" (upper)"), QStringLiteral("y"), band.upper);
    }
    return text;
}

QString csvFromHeatmap(const QString& title, const std::vector<HeatColumn>& columns, const QString& caption) {
    QString text = commentLines(title, caption);
    QStringList header = {QStringLiteral("step_first"), QStringLiteral("step_last")};
    const size_t blocks = columns.empty() ? 0 : columns.front().values.size();
    for (size_t b = 0; b < blocks; ++b) header << QStringLiteral("block_%1").arg(b);
    text += header.join(QLatin1Char(',')) + QLatin1Char('\n');
    for (const HeatColumn& column : columns) {
        QStringList row = {QString::number(column.x_first, 'f', 0), QString::number(column.x_last, 'f', 0)};
        for (double value : column.values) row << QString::number(value, 'g', QLocale::FloatingPointShortest);
        text += row.join(QLatin1Char(',')) + QLatin1Char('\n');
    }
    return text;
}

}  // namespace normlab::ui
