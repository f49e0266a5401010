// Every chart stays responsive whatever the data: values from 1e-300 to 1e300, the largest doubles,
// denormals, NaN and Inf, a single value, a zero range. Each redraw (new content plus a full paint)
// finishes within 100 ms on log and linear axes, axis ranges stay finite with a bounded tick count, and
// non-finite values become markers instead of reaching an axis.
#include <QChartView>
#include <QElapsedTimer>
#include <QScatterSeries>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/plots/axis_range.h"
#include "ui/plots/heatmap_view.h"
#include "ui/plots/line_plot.h"

using namespace normlab::ui;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr qint64 kRedrawBudgetMs = 100;

struct Dataset {
    const char* name;
    QVector<double> values;  // at steps 1, 2, ...
};

std::vector<Dataset> datasets() {
    QVector<double> decades, flat, jitter;
    for (int i = 0; i <= 600; ++i) decades << std::pow(10.0, -300.0 + i);
    for (int i = 0; i < 50; ++i) flat << 7.0;
    for (int i = 0; i < 50; ++i) jitter << 1e12 + 1e-3 * i;
    return {{"1e-300 to 1e300", decades},
            {"NaN and Inf among finite values", {1.0, 2.0, kNaN, kInf, -kInf, 3.0, 2.5}},
            {"a single value", {2.5}},
            {"zero range", flat},
            {"the largest doubles", {std::numeric_limits<double>::max(), 1e308, -1e308, 5.0}},
            {"denormals", {4.9e-324, 1e-310, 1.0}},
            {"only NaN and Inf", {kNaN, kInf, kNaN}},
            {"a huge value with a tiny spread", jitter},
            {"negative and zero values", {-5.0, 0.0, -1e-200, 3.0}}};
}

int nonFiniteCount(const QVector<double>& values) {
    return static_cast<int>(
        std::count_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }));
}

AxisSpec axis(const char* title, bool log) {
    AxisSpec spec;
    spec.title = QString::fromLatin1(title);
    spec.log = log;
    return spec;
}

PlotContent lineContent(const Dataset& data, bool logY, bool secondAxis) {
    PlotContent content;
    content.x.title = QStringLiteral("step");
    content.y = axis("value", logY);
    PlotSeries series;
    series.name = QString::fromLatin1(data.name);
    series.colour = QColor(0, 114, 178);
    for (int i = 0; i < data.values.size(); ++i) series.points.append({double(i + 1), data.values[i]});
    content.series = {series};
    if (secondAxis) {
        content.y2 = axis("other", logY);
        series.onSecondaryAxis = true;
        series.name += QStringLiteral(" (right)");
        content.series.push_back(series);
    }
    return content;
}

// Milliseconds for the best of three redraws (new content, then a whole paint), each from a plain chart.
template <typename View, typename Content>
qint64 bestRedrawMs(View& view, const Content& plain, const Content& extreme) {
    qint64 best = std::numeric_limits<qint64>::max();
    for (int attempt = 0; attempt < 3; ++attempt) {
        view.setContent(plain);
        view.grab();
        QElapsedTimer timer;
        timer.start();
        view.setContent(extreme);
        const QPixmap painted = view.grab();
        best = std::min(best, timer.elapsed());
        if (painted.isNull()) return -1;
    }
    return best;
}

int scatterPoints(LinePlot& plot) {
    int points = 0;
    for (QAbstractSeries* series : plot.findChild<QChartView*>()->chart()->series())
        if (auto* scatter = qobject_cast<QScatterSeries*>(series)) points += scatter->count();
    return points;
}
}  // namespace

class ExtremeDataTest : public QObject {
    Q_OBJECT
  private slots:
    void lineChartsRedrawQuickly_data();
    void lineChartsRedrawQuickly();
    void axisRangesStayFiniteAndBounded_data();
    void axisRangesStayFiniteAndBounded();
    void heatmapRedrawsQuickly_data();
    void heatmapRedrawsQuickly();
};

void ExtremeDataTest::lineChartsRedrawQuickly_data() {
    QTest::addColumn<int>("index");
    QTest::addColumn<bool>("logY");
    QTest::addColumn<bool>("secondAxis");
    const auto all = datasets();
    for (int i = 0; i < int(all.size()); ++i)
        for (bool logY : {false, true})
            for (bool second : {false, true})
                QTest::addRow("%s, %s%s", all[i].name, logY ? "log" : "linear", second ? ", two axes" : "")
                    << i << logY << second;
}

void ExtremeDataTest::lineChartsRedrawQuickly() {
    QFETCH(int, index);
    QFETCH(bool, logY);
    QFETCH(bool, secondAxis);
    const Dataset data = datasets()[index];
    LinePlot plot(QStringLiteral("extreme"));
    plot.resize(640, 420);
    const PlotContent plain = lineContent({"plain", {1.0, 2.0, 3.0}}, logY, secondAxis);
    const qint64 ms = bestRedrawMs(plot, plain, lineContent(data, logY, secondAxis));
    QVERIFY2(ms >= 0 && ms < kRedrawBudgetMs, qPrintable(QStringLiteral("redraw took %1 ms").arg(ms)));
    // Each NaN / Inf value of each series is a marker at the top.
    QCOMPARE(scatterPoints(plot), nonFiniteCount(data.values) * (secondAxis ? 2 : 1));
}

void ExtremeDataTest::axisRangesStayFiniteAndBounded_data() {
    lineChartsRedrawQuickly_data();
}

void ExtremeDataTest::axisRangesStayFiniteAndBounded() {
    QFETCH(int, index);
    QFETCH(bool, logY);
    const Dataset data = datasets()[index];
    DataRange range;
    for (double v : data.values)
        if (!logY || v > 0.0) range.include(v);
    const AxisRange shown = stableAxisRange(axis("value", logY), range, std::nullopt);
    QVERIFY2(std::isfinite(shown.min) && std::isfinite(shown.max) && shown.min < shown.max,
             qPrintable(QStringLiteral("[%1, %2]").arg(shown.min).arg(shown.max)));
    if (logY) {
        QVERIFY(shown.min > 0.0);
        return;
    }
    QVERIFY(shown.tick > 0.0);
    const double ticks = (shown.max - shown.min) / shown.tick;
    QVERIFY2(ticks >= 2.0 && ticks <= 20.0, qPrintable(QStringLiteral("%1 ticks").arg(ticks)));
    // A tick step above the values' resolution: adding it always moves on.
    QVERIFY(shown.max + shown.tick > shown.max && shown.min + shown.tick > shown.min);
}

void ExtremeDataTest::heatmapRedrawsQuickly_data() {
    QTest::addColumn<int>("index");
    const auto all = datasets();
    for (int i = 0; i < int(all.size()); ++i) QTest::addRow("%s", all[i].name) << i;
}

void ExtremeDataTest::heatmapRedrawsQuickly() {
    QFETCH(int, index);
    const Dataset data = datasets()[index];
    HeatmapContent plain, extreme;
    plain.title = extreme.title = QStringLiteral("heatmap");
    for (int step = 1; step <= 40; ++step) {
        plain.columns.push_back({double(step), double(step), std::vector<double>(6, 1.0)});
        std::vector<double> blocks(6);
        for (int b = 0; b < 6; ++b) blocks[b] = data.values[(step * 6 + b) % data.values.size()];
        extreme.columns.push_back({double(step), double(step), blocks});
    }
    HeatmapView view;
    view.resize(640, 420);
    const qint64 ms = bestRedrawMs(view, plain, extreme);
    QVERIFY2(ms >= 0 && ms < kRedrawBudgetMs, qPrintable(QStringLiteral("redraw took %1 ms").arg(ms)));
    const auto [lo, hi] = view.logRange();
    QVERIFY(std::isfinite(lo) && std::isfinite(hi) && lo < hi);
}

QTEST_MAIN(ExtremeDataTest)
#include "test_extreme_data.moc"
