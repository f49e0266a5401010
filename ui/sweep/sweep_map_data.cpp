// buildSweepMap: points placed by the value index of each axis, seeds pooled into cells.
#include "ui/sweep/sweep_map_data.h"

#include <QLocale>
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/stats/estimates.h"
#include "engine/sweep/sweep_folder.h"
#include "ui/export/plot_csv.h"

namespace normlab::ui {

namespace {
// Each axis' value index of a point, from its labels.
int valueIndex(const normlab::SweepAxis& axis, const std::string& label) {
    for (size_t i = 0; i < axis.size(); ++i) {
        const std::string own =
            axis.labels.empty() ? normlab::override_text(axis.values[0][i]) : axis.labels[i];
        if (own == label) return static_cast<int>(i);
    }
    return -1;
}

QStringList axisLabels(const normlab::SweepAxis& axis) {
    QStringList labels;
    for (size_t i = 0; i < axis.size(); ++i)
        labels << QString::fromStdString(axis.labels.empty() ? normlab::override_text(axis.values[0][i])
                                                             : axis.labels[i]);
    return labels;
}

QString pointTip(const normlab::CollectedPoint& point, const normlab::SweepPlan& plan, bool validation) {
    QStringList lines;
    for (size_t a = 0; a < plan.spec.axes.size(); ++a)
        lines << QStringLiteral("%1 = %2").arg(QString::fromStdString(plan.spec.axes[a].name()),
                                               QString::fromStdString(point.point.labels[a]));
    QString result = QStringLiteral("seed %1: %2")
                         .arg(point.point.seed)
                         .arg(QString::fromLatin1(normlab::to_string(point.progress.state)));
    if (const auto loss = point.final_loss(validation))
        result += QStringLiteral(", final loss %1").arg(*loss, 0, 'f', 4);
    if (point.progress.summary && point.progress.summary->diverged_at)
        result += QStringLiteral(" at step %1").arg(*point.progress.summary->diverged_at);
    lines << result;
    return lines.join(QLatin1Char('\n'));
}

void count(MapCell& cell, normlab::PointState state) {
    switch (state) {
        case normlab::PointState::Completed:
            ++cell.done;
            break;
        case normlab::PointState::Diverged:
            ++cell.diverged;
            break;
        case normlab::PointState::Running:
            ++cell.running;
            break;
        case normlab::PointState::Failed:
            ++cell.failed;
            break;
        case normlab::PointState::ToDo:
            ++cell.todo;
            break;
    }
}
}  // namespace

namespace {
// The best cell (lowest mean), and the cells whose interval overlaps its interval.
void markNearBest(SweepMapContent& content) {
    MapCell* best = nullptr;
    for (MapFacet& facet : content.facets)
        for (auto& row : facet.cells)
            for (MapCell& cell : row)
                if (cell.value && (!best || *cell.value < *best->value)) best = &cell;
    if (!best) return;
    best->best = true;
    if (!best->ciLow) return;
    for (MapFacet& facet : content.facets)
        for (auto& row : facet.cells)
            for (MapCell& cell : row)
                cell.nearBest = &cell != best && cell.ciLow && *cell.ciLow <= *best->ciHigh &&
                                *best->ciLow <= *cell.ciHigh;
}
}  // namespace

MapChoice defaultMapChoice(const normlab::SweepPlan& plan) {
    MapChoice choice;
    const int axes = static_cast<int>(plan.spec.axes.size());
    choice.fixed.assign(axes, 0);
    const int lr = normlab::learning_rate_axis(plan);
    std::vector<int> order;
    if (lr >= 0) order.push_back(lr);
    for (int a = 0; a < axes; ++a)
        if (a != lr) order.push_back(a);
    choice.xAxis = order[0];
    choice.yAxis = axes > 1 ? order[1] : -1;
    choice.facetAxis = axes > 2 ? order[2] : -1;
    return choice;
}

SweepMapContent buildSweepMap(const normlab::SweepPlan& plan,
                              const std::vector<normlab::CollectedPoint>& points, const MapChoice& choice,
                              const QString& sweepDir) {
    SweepMapContent content;
    const auto& axes = plan.spec.axes;
    const auto axisOr = [&axes](int a, size_t fallback) { return a >= 0 ? axes[a].size() : fallback; };
    content.xTitle = QString::fromStdString(axes[choice.xAxis].name());
    content.yTitle = choice.yAxis >= 0 ? QString::fromStdString(axes[choice.yAxis].name()) : QString();
    content.xLabels = axisLabels(axes[choice.xAxis]);
    content.yLabels = choice.yAxis >= 0 ? axisLabels(axes[choice.yAxis]) : QStringList{QString()};
    content.valueTitle = choice.validation
                             ? QStringLiteral(
                                   "final loss (validation where a run has one, else training), "
                                   "clamped at the initial loss")
                             : QStringLiteral("final training loss, clamped at the initial loss");
    const QStringList facetLabels =
        choice.facetAxis >= 0 ? axisLabels(axes[choice.facetAxis]) : QStringList{QString()};
    for (const QString& label : facetLabels) {
        MapFacet facet;
        facet.title =
            choice.facetAxis >= 0
                ? QStringLiteral("%1 = %2").arg(QString::fromStdString(axes[choice.facetAxis].name()), label)
                : QString();
        facet.cells.assign(axisOr(choice.yAxis, 1), std::vector<MapCell>(axes[choice.xAxis].size()));
        content.facets.push_back(std::move(facet));
    }
    std::vector<std::vector<std::vector<std::vector<double>>>> samples(
        content.facets.size(),
        std::vector<std::vector<std::vector<double>>>(
            axisOr(choice.yAxis, 1), std::vector<std::vector<double>>(axes[choice.xAxis].size())));
    double low = std::numeric_limits<double>::infinity(), high = -low;
    for (const normlab::CollectedPoint& point : points) {
        std::vector<int> at(axes.size());
        bool shown = true;
        for (size_t a = 0; a < axes.size(); ++a) {
            at[a] = valueIndex(axes[a], point.point.labels[a]);
            const bool onMap = static_cast<int>(a) == choice.xAxis || static_cast<int>(a) == choice.yAxis ||
                               static_cast<int>(a) == choice.facetAxis;
            if (!onMap && at[a] != choice.fixed[a]) shown = false;
        }
        if (!shown) continue;
        const size_t f = choice.facetAxis >= 0 ? at[choice.facetAxis] : 0;
        const size_t y = choice.yAxis >= 0 ? at[choice.yAxis] : 0;
        const size_t x = at[choice.xAxis];
        MapCell& cell = content.facets[f].cells[y][x];
        count(cell, point.progress.state);
        cell.folders << QString::fromStdString(normlab::point_folder(sweepDir.toStdString(), point.point));
        cell.tip += (cell.tip.isEmpty() ? QString() : QStringLiteral("\n")) +
                    pointTip(point, plan, choice.validation);
        if (const auto clamped = point.clamped_loss(choice.validation)) {
            samples[f][y][x].push_back(*clamped);
        }
        if (point.initial_loss) high = std::max(high, *point.initial_loss);
    }
    for (size_t f = 0; f < samples.size(); ++f)
        for (size_t y = 0; y < samples[f].size(); ++y)
            for (size_t x = 0; x < samples[f][y].size(); ++x)
                if (const auto& values = samples[f][y][x]; !values.empty()) {
                    MapCell& cell = content.facets[f].cells[y][x];
                    const normlab::stats::Estimate estimate = normlab::stats::estimate_mean(values);
                    cell.value = estimate.mean;
                    cell.seeds = static_cast<int>(estimate.n);
                    if (estimate.ci) cell.ciLow = estimate.ci->low, cell.ciHigh = estimate.ci->high;
                    low = std::min(low, estimate.mean);
                }
    markNearBest(content);
    if (std::isfinite(low) && std::isfinite(high) && high > low)
        content.low = low, content.high = high;
    else if (std::isfinite(low))
        content.low = low, content.high = low + 1.0;
    if (choice.relativeSpan > 0 && std::isfinite(low) && low > 0) {
        content.relativeSpan = choice.relativeSpan;
        content.high = low * (1.0 + choice.relativeSpan);
    }
    return content;
}

namespace {
QString number(std::optional<double> value) {
    return value ? QString::number(*value, 'g', QLocale::FloatingPointShortest) : QString();
}
}  // namespace

QString sweepMapCsv(const SweepMapContent& content, const QString& caption) {
    QString text;
    for (const QString& line : caption.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        text += QStringLiteral("# %1\n").arg(line);
    text += QStringLiteral("# value: %1\n").arg(content.valueTitle);
    text += QStringLiteral(
                "facet,%1,%2,value,done,diverged,running,failed,to_do,seeds,ci95_low,ci95_high,near_best\n")
                .arg(csvField(content.yTitle.isEmpty() ? QStringLiteral("y") : content.yTitle),
                     csvField(content.xTitle));
    for (const MapFacet& facet : content.facets)
        for (size_t y = 0; y < facet.cells.size(); ++y)
            for (size_t x = 0; x < facet.cells[y].size(); ++x) {
                const MapCell& cell = facet.cells[y][x];
                text += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8,%9")
                            .arg(csvField(facet.title), csvField(content.yLabels[y]),
                                 csvField(content.xLabels[x]), number(cell.value))
                            .arg(cell.done)
                            .arg(cell.diverged)
                            .arg(cell.running)
                            .arg(cell.failed)
                            .arg(cell.todo) +
                        QStringLiteral(",%1,%2,%3,%4\n")
                            .arg(cell.seeds)
                            .arg(number(cell.ciLow), number(cell.ciHigh),
                                 cell.best       ? QStringLiteral("best")
                                 : cell.nearBest ? QStringLiteral("yes")
                                                 : QStringLiteral("no"));
            }
    return text;
}

}  // namespace normlab::ui
