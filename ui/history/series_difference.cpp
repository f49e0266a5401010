// seriesDifference: a merge of two step-ordered sample lists on equal steps.
#include "ui/history/series_difference.h"

namespace normlab::ui {

QVector<QPointF> seriesDifference(const DecimatedSeries& a, const DecimatedSeries& b) {
    const QVector<QPointF> first = a.samples();
    const QVector<QPointF> second = b.samples();
    QVector<QPointF> difference;
    qsizetype i = 0, j = 0;
    while (i < first.size() && j < second.size()) {
        if (first[i].x() < second[j].x()) {
            ++i;
        } else if (second[j].x() < first[i].x()) {
            ++j;
        } else {
            difference.append({first[i].x(), second[j].y() - first[i].y()});
            ++i;
            ++j;
        }
    }
    return difference;
}

}  // namespace normlab::ui
