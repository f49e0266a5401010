// edgeChartContent: probes sorted by value per search, markers and bands from the report's estimates.
#include "ui/sweep/edge_chart.h"

#include <QObject>
#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/history/telemetry_store.h"

namespace normlab::ui {

namespace {
// The finite final losses' range (for the edges' interval bands), or [0, 1] when there are none.
std::pair<double, double> lossRange(const normlab::EdgeReport& report) {
    double low = std::numeric_limits<double>::infinity(), high = -low;
    for (const normlab::EdgeVariantReport& variant : report.variants)
        for (const normlab::EdgeSearchState& state : variant.seeds)
            for (const normlab::JudgedProbe& probe : state.probes)
                if (probe.result.final_loss && std::isfinite(*probe.result.final_loss))
                    low = std::min(low, *probe.result.final_loss),
                    high = std::max(high, *probe.result.final_loss);
    return low <= high ? std::pair{low, high} : std::pair{0.0, 1.0};
}

PlotSeries probeSeries(const normlab::EdgeSearchState& state, const QString& name, const QColor& colour) {
    std::vector<normlab::JudgedProbe> probes = state.probes;
    std::sort(probes.begin(), probes.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
    PlotSeries series{name, colour, {}, 1.2};
    series.pointsVisible = true;
    for (const normlab::JudgedProbe& probe : probes) {
        // A diverged probe (or one without a finite loss) is a NaN mark along the top.
        const double loss = probe.result.diverged || !probe.result.final_loss
                                ? std::numeric_limits<double>::infinity()
                                : *probe.result.final_loss;
        series.points.append({probe.value, loss});
    }
    return series;
}
}  // namespace

PlotContent edgeChartContent(const normlab::EdgeSpec& spec, const normlab::EdgeReport& report) {
    PlotContent content;
    content.x =
        AxisSpec{QString::fromStdString(spec.key), true, spec.bounds.low, spec.bounds.high, QString()};
    content.y.title = QObject::tr("final loss");
    content.emptyText = QObject::tr("Appears as probes finish");
    content.styleKey =
        QObject::tr("a line per seed: its probes; vertical: the edge (geometric mean over seeds)");
    const auto [lowLoss, highLoss] = lossRange(report);
    QStringList words;
    for (size_t v = 0; v < report.variants.size(); ++v) {
        const normlab::EdgeVariantReport& variant = report.variants[v];
        const QString label = QString::fromStdString(variant.label);
        const QColor colour = TelemetryStore::paletteColour(static_cast<int>(v));
        for (size_t s = 0; s < variant.seeds.size() && s < spec.seeds.size(); ++s) {
            PlotSeries series = probeSeries(
                variant.seeds[s], QStringLiteral("%1 seed %2").arg(label).arg(spec.seeds[s]), colour);
            series.inLegend = s == 0;
            if (s == 0) series.name = label;
            content.series.push_back(std::move(series));
        }
        words << QString::fromStdString(normlab::edge_variant_text(variant));
        if (!variant.log_edge) continue;
        const double edge = std::exp(variant.log_edge->mean);
        content.markers.push_back({edge, QObject::tr("%1 edge %2").arg(label).arg(edge, 0, 'g', 3), colour});
        if (const auto& ci = variant.log_edge->ci) {
            PlotBand band{QObject::tr("%1 edge: 95% CI over %2 seeds").arg(label).arg(variant.log_edge->n),
                          {},
                          {},
                          colour};
            band.lower = {{std::exp(ci->low), lowLoss}, {std::exp(ci->high), lowLoss}};
            band.upper = {{std::exp(ci->low), highLoss}, {std::exp(ci->high), highLoss}};
            content.bands.push_back(std::move(band));
        }
    }
    for (const normlab::EdgeRatio& ratio : report.ratios)
        words << QString::fromStdString(normlab::edge_ratio_text(ratio));
    if (!report.finished) words << QObject::tr("still probing: the chart fills in as probes finish");
    content.note = words.join(QLatin1Char('\n'));
    return content;
}

}  // namespace normlab::ui
