// The line chart itself: hovering a drawn point shows its exact value in a tooltip (left and right
// value axes), a click pins a readout of every series at that step, axis ranges stay put while the
// data stay inside them and grow with headroom, long axis titles shrink to fit, and a growing line
// redraws only its tail while the points before it are unchanged; on a log axis over 20+ decades the
// line is drawn where the axis' labels say, read back from the drawn pixels.
#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QLogValueAxis>
#include <QTest>
#include <QTextDocument>
#include <QToolTip>
#include <QValueAxis>
#include <QWheelEvent>

#include "ui/plots/axis_range.h"
#include "ui/plots/line_plot.h"
#include "ui/plots/line_plot_parts.h"
#include "ui/plots/line_split.h"
#include "ui/plots/plot_zoom.h"

using namespace normlab::ui;

class LinePlotTest : public QObject {
    Q_OBJECT
  private slots:
    void hoverShowsExactValue();
    void axisRangeIsSticky();
    void growingLineKeepsItsHead();
    void longAxisTitleShrinksRatherThanElides();
    void zoomByDragWheelAndDoubleClick();
    void zoomPartSpansAndFollowRule();
    void longNamesWrapInTheLegend();
    void logAxisDrawsValuesWhereItsLabelsSay();

  private:
    // Moves the mouse onto `value` as drawn by `plot` and returns the tooltip then shown.
    static QString tooltipAt(LinePlot& plot, const QPointF& value, bool secondary);
};

QString LinePlotTest::tooltipAt(LinePlot& plot, const QPointF& value, bool secondary) {
    QToolTip::hideText();
    const QPoint at = plot.positionOf(value, secondary).toPoint();
    QWidget* target = plot.childAt(at);
    if (!target) return QStringLiteral("(no widget under the point)");
    // Approach from off the line so that the series sees the mouse enter.
    QTest::mouseMove(target, target->mapFrom(&plot, at + QPoint(0, 40)));
    QTest::mouseMove(target, target->mapFrom(&plot, at));
    if (!QTest::qWaitFor([] { return QToolTip::isVisible(); }, 2000)) return QStringLiteral("(no tooltip)");
    return QToolTip::text();
}

void LinePlotTest::hoverShowsExactValue() {
    PlotContent content;
    content.x.title = QStringLiteral("step");
    content.y.title = QStringLiteral("loss");
    content.y2 = AxisSpec{QStringLiteral("lr"), false, 0.0, std::nullopt};
    PlotSeries loss{QStringLiteral("train"), QColor(0, 114, 178)};
    PlotSeries lr{QStringLiteral("lr"), QColor(213, 94, 0)};
    lr.onSecondaryAxis = true;
    for (int step = 1; step <= 40; ++step) {
        loss.points.append({double(step), step == 20 ? 3.14159 : 2.0 + 0.01 * step});
        lr.points.append({double(step), step == 30 ? 0.00271828 : 0.001});
    }
    content.series = {loss, lr};
    LinePlot plot(QStringLiteral("Loss"));
    plot.resize(640, 420);
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    plot.setContent(content);
    QCoreApplication::processEvents();

    QCOMPARE(tooltipAt(plot, {20.0, 3.14159}, false), QStringLiteral("train\nstep = 20\nloss = 3.14159"));
    QCOMPARE(tooltipAt(plot, {30.0, 0.00271828}, true), QStringLiteral("lr\nstep = 30\nlr = 0.00271828"));

    // A click pins a readout of every series at the nearest step; a click on that column unpins it.
    QWidget* viewport = plot.findChild<QChartView*>()->viewport();
    const QPoint at = viewport->mapFrom(&plot, plot.positionOf({20.0, 2.5}).toPoint());
    QTest::mouseClick(viewport, Qt::LeftButton, {}, at);
    QCOMPARE(plot.pinnedStep(), std::optional<double>(20.0));
    QCOMPARE(plot.readoutText(), QStringLiteral("step = 20\ntrain: 3.14159\nlr: 0.001"));
    // It follows new data while pinned.
    content.series[0].points[19].setY(2.71828);
    plot.setContent(content);
    QVERIFY(plot.readoutText().contains(QStringLiteral("train: 2.71828")));
    QTest::mouseClick(viewport, Qt::LeftButton, {}, at);
    QCOMPARE(plot.pinnedStep(), std::nullopt);
    QVERIFY(plot.readoutGeometry().isEmpty());

    // Long run names, pinned near either edge: the box stays within the chart (it once hung off its left
    // edge, the names cut off), the names shortened only when a row is wider than the whole chart.
    content.series[0].name = QStringLiteral("postln-no-warmup / fork@124 (changed) / fork@200 (changed)");
    content.series[1].name =
        QStringLiteral("a name far too long for any chart: ") + QString(200, QLatin1Char('x'));
    plot.setContent(content);
    for (const double step : {1.0, 20.0, 40.0}) {
        plot.pinReadout(step);
        const QRect box = plot.readoutGeometry();
        QVERIFY2(!box.isEmpty() && plot.rect().contains(box),
                 qPrintable(QStringLiteral("step %1: box %2,%3 %4x%5 in %6x%7")
                                .arg(step)
                                .arg(box.x())
                                .arg(box.y())
                                .arg(box.width())
                                .arg(box.height())
                                .arg(plot.width())
                                .arg(plot.height())));
    }
    QVERIFY(plot.readoutText().contains(content.series[1].name));  // the text itself keeps whole names
    {
        // A narrow empty chart wraps its text inside the plot (it once ran over both axes).
        LinePlot narrow(QStringLiteral("Attention logits"));
        narrow.resize(300, 260);
        narrow.show();
        QVERIFY(QTest::qWaitForWindowExposed(&narrow));
        PlotContent nothing;
        nothing.x.title = QStringLiteral("step");
        nothing.emptyText = QStringLiteral(
            "Appears after the first step with attention statistics, once a run "
            "records them");
        nothing.series = {PlotSeries{}};
        narrow.setContent(nothing);
        QCoreApplication::processEvents();
        const QRect text = narrow.emptyTextGeometry();
        QVERIFY2(!text.isEmpty() && narrow.rect().contains(text) && text.width() < narrow.width() - 60,
                 qPrintable(QStringLiteral("%1 wide in %2").arg(text.width()).arg(narrow.width())));
    }

    // A run that ended before the pinned step shows its last value with its own step; one that starts
    // after it shows nothing (the nearest point once passed a later or ended run's value as this step's).
    PlotSeries ended = content.series[0];
    ended.name = QStringLiteral("ended");
    ended.points = {{1.0, 5.0}, {10.0, 4.5}};
    PlotSeries late = ended;
    late.name = QStringLiteral("late");
    late.points = {{30.0, 1.25}, {40.0, 1.5}};
    content.series = {ended, late};
    plot.setContent(content);
    plot.pinReadout(25.0);
    QCOMPARE(plot.readoutText(), QStringLiteral("step = 25\nended: 4.5 (step 10)"));
    // Many runs: the box keeps to the chart's height, the last row saying how many more there are.
    content.series.clear();
    for (int i = 0; i < 40; ++i) {
        PlotSeries each = ended;
        each.name = QStringLiteral("run %1").arg(i);
        content.series.push_back(each);
    }
    plot.setContent(content);
    plot.pinReadout(10.0);
    const QRect tall = plot.readoutGeometry();
    QVERIFY2(!tall.isEmpty() && plot.rect().contains(tall),
             qPrintable(QStringLiteral("%1 high in %2").arg(tall.height()).arg(plot.height())));
}

void LinePlotTest::axisRangeIsSticky() {
    AxisSpec steps{QStringLiteral("step")};
    DataRange data;
    data.include(1.0);
    data.include(300.0);
    const AxisRange first = stableAxisRange(steps, data, std::nullopt);
    QVERIFY(first.min <= 1.0 && first.max >= 300.0);
    // The run goes on inside the range: nothing changes.
    data.include(first.max - 0.1 * (first.max - first.min));
    QCOMPARE(stableAxisRange(steps, data, first), first);
    // Past it: a new range with room to grow (about a quarter of the span) and round ticks.
    DataRange longer = data;
    longer.include(first.max + 1.0);
    const AxisRange grown = stableAxisRange(steps, longer, first);
    QVERIFY(grown.max >= first.max + 1.0 + 0.2 * (first.max - first.min));
    QCOMPARE(niceStep(grown.tick), grown.tick);
    // Growing at the top never pushes the bottom away from the data (steps start at 1, not -100).
    AxisRange shown = first;
    for (double last = 301.0; last < 5000.0; last *= 1.1) {
        DataRange run;
        run.include(1.0);
        run.include(last);
        shown = stableAxisRange(steps, run, shown);
        QVERIFY2(shown.min >= 1.0 - 0.1 * last, qPrintable(QString::number(shown.min)));
    }
    // A restart (data far smaller than the range): fitted again.
    DataRange restarted;
    restarted.include(1.0);
    restarted.include(5.0);
    QVERIFY(stableAxisRange(steps, restarted, grown).max < 20.0);
    // Log axes: whole decades, kept while the data stay inside.
    AxisSpec norms{QStringLiteral("norm"), true};
    DataRange small;
    small.include(2e-5);
    small.include(0.3);
    const AxisRange decades = stableAxisRange(norms, small, std::nullopt);
    QCOMPARE(decades.min, 1e-5);
    QCOMPARE(decades.max, 1.0);
    small.include(0.9);
    QCOMPARE(stableAxisRange(norms, small, decades), decades);
}

void LinePlotTest::growingLineKeepsItsHead() {
    QVector<QPointF> points;
    for (int i = 0; i < 100; ++i) points.append({double(i), double(i % 7)});
    const LineSplit first = splitLine({}, 0, points);
    QVERIFY(first.headChanged);
    QCOMPARE(first.headCount, 100 - kTailKeep);
    // New points at the end only: the head stays.
    QVector<QPointF> more = points;
    for (int i = 100; i < 120; ++i) more.append({double(i), 1.0});
    const LineSplit second = splitLine(points, first.headCount, more);
    QVERIFY(!second.headChanged);
    QCOMPARE(second.headCount, first.headCount);
    // A changed point inside the head: redone.
    QVector<QPointF> changed = more;
    changed[10].setY(42.0);
    QVERIFY(splitLine(more, second.headCount, changed).headChanged);
    // A long tail is folded into the head.
    QVector<QPointF> longTail = more;
    for (int i = 120; i < 120 + kTailMax; ++i) longTail.append({double(i), 2.0});
    const LineSplit folded = splitLine(more, second.headCount, longTail);
    QVERIFY(folded.headChanged);
    QCOMPARE(folded.headCount, int(longTail.size()) - kTailKeep);
}

namespace {
// The step axis' range as QtCharts has it.
std::pair<double, double> stepAxisRange(LinePlot& plot) {
    auto* axis =
        qobject_cast<QValueAxis*>(plot.findChild<QChartView*>()->chart()->axes(Qt::Horizontal).front());
    return {axis->min(), axis->max()};
}

PlotContent rampTo(int last) {
    PlotContent content;
    content.x.title = QStringLiteral("step");
    content.y.title = QStringLiteral("value");
    PlotSeries series;
    series.name = QStringLiteral("ramp");
    series.colour = Qt::blue;
    for (int step = 1; step <= last; ++step) series.points.append({double(step), double(step)});
    content.series = {series};
    return content;
}
}  // namespace

void LinePlotTest::longAxisTitleShrinksRatherThanElides() {
    PlotContent content = rampTo(20);
    content.y.title = QStringLiteral("||update|| / ||W|| (block)");
    LinePlot plot(QStringLiteral("Update ratio"));
    plot.setStyle(ChartStyle{ChartStyle::kPresentationScale});
    plot.resize(500, 330);
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    plot.setContent(content);
    QCoreApplication::processEvents();
    QChart* chart = plot.findChild<QChartView*>()->chart();
    QAbstractAxis* y = chart->axes(Qt::Vertical).front();
    const QFont title = y->titleFont();
    QVERIFY2(title.pointSizeF() < ChartStyle{ChartStyle::kPresentationScale}.points(9),
             qPrintable(QString::number(title.pointSizeF())));
    QVERIFY2(QFontMetricsF(title).horizontalAdvance(y->titleText()) <= chart->plotArea().height(),
             qPrintable(QStringLiteral("%1 pt: %2 px in %3 px")
                            .arg(title.pointSizeF())
                            .arg(QFontMetricsF(title).horizontalAdvance(y->titleText()))
                            .arg(chart->plotArea().height())));
}

void LinePlotTest::zoomByDragWheelAndDoubleClick() {
    LinePlot plot(QStringLiteral("Zoom"));
    plot.resize(700, 420);
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    plot.setContent(rampTo(100));
    QCoreApplication::processEvents();
    // Zoomed into the past: the step axis shows the span, the value axis fits what is inside it, and
    // it stays put as the run grows.
    plot.setZoom(std::pair{20.0, 40.0});
    QCOMPARE(stepAxisRange(plot), (std::pair{20.0, 40.0}));
    auto* values =
        qobject_cast<QValueAxis*>(plot.findChild<QChartView*>()->chart()->axes(Qt::Vertical).front());
    QVERIFY2(values->max() < 60.0 && values->min() > 0.0, qPrintable(QString::number(values->max())));
    QVERIFY(!plot.followLatest());
    plot.setContent(rampTo(120));
    QCOMPARE(stepAxisRange(plot), (std::pair{20.0, 40.0}));
    // A span reaching the newest step follows it.
    plot.setZoom(std::pair{100.0, 120.0});
    QVERIFY(plot.followLatest());
    plot.setContent(rampTo(150));
    QCOMPARE(stepAxisRange(plot), (std::pair{130.0, 150.0}));
    // A double click shows everything; a drag across the plot zooms to the dragged span.
    QWidget* viewport = plot.findChild<QChartView*>()->viewport();
    const QPoint centre = viewport->rect().center();
    // A double click as a display sends it (press, release, double click, release): the zoom is reset
    // and nothing is pinned, though the first release pinned a step and the last one, on the axis the
    // reset changed, would have pinned another.
    const QPointF global = viewport->mapToGlobal(QPointF(centre));
    for (const QEvent::Type type : {QEvent::MouseButtonPress, QEvent::MouseButtonRelease,
                                    QEvent::MouseButtonDblClick, QEvent::MouseButtonRelease}) {
        const Qt::MouseButtons held = type == QEvent::MouseButtonRelease ? Qt::NoButton : Qt::LeftButton;
        QMouseEvent click(type, QPointF(centre), global, Qt::LeftButton, held, Qt::NoModifier);
        QCoreApplication::sendEvent(viewport, &click);
    }
    QCOMPARE(plot.zoom(), std::nullopt);
    QCOMPARE(plot.pinnedStep(), std::nullopt);
    const QPoint from = viewport->mapFrom(&plot, plot.positionOf({50.0, 75.0}).toPoint());
    const QPoint to = viewport->mapFrom(&plot, plot.positionOf({90.0, 75.0}).toPoint());
    QTest::mousePress(viewport, Qt::LeftButton, {}, from);
    QMouseEvent move(QEvent::MouseMove, to, viewport->mapToGlobal(to), Qt::NoButton, Qt::LeftButton, {});
    QCoreApplication::sendEvent(viewport, &move);
    QTest::mouseRelease(viewport, Qt::LeftButton, {}, to);
    QVERIFY(plot.zoom().has_value());
    QVERIFY2(std::abs(plot.zoom()->first - 50.0) < 2.0 && std::abs(plot.zoom()->second - 90.0) < 2.0,
             qPrintable(QStringLiteral("%1..%2").arg(plot.zoom()->first).arg(plot.zoom()->second)));
    // The wheel zooms in around the pointer.
    const double span = plot.zoom()->second - plot.zoom()->first;
    QWheelEvent wheel(QPointF(centre), viewport->mapToGlobal(QPointF(centre)), QPoint(), QPoint(0, 120),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(viewport, &wheel);
    QVERIFY(plot.zoom()->second - plot.zoom()->first < span * 0.9);
    // With Shift it pans: one notch up moves the span a tenth of its width towards earlier steps.
    const std::pair<double, double> before = *plot.zoom();
    QWheelEvent pan(QPointF(centre), viewport->mapToGlobal(QPointF(centre)), QPoint(), QPoint(0, 120),
                    Qt::NoButton, Qt::ShiftModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(viewport, &pan);
    const double width = before.second - before.first;
    QVERIFY(std::abs(plot.zoom()->first - (before.first - width / 10)) < 1e-9 * width);
    QVERIFY(std::abs(plot.zoom()->second - (before.second - width / 10)) < 1e-9 * width);
}

namespace {
// A block profile spanning `decades` decades from `top` downwards, one point per block.
PlotContent blockProfile(double top, double decades, int blocks) {
    PlotContent content;
    content.x.title = QStringLiteral("block");
    content.y = AxisSpec{QStringLiteral("gradient norm"), true};
    PlotSeries series{QStringLiteral("deep-postln"), QColor(255, 0, 255)};
    series.width = 3.0;
    for (int block = 0; block < blocks; ++block)
        series.points.append(
            {double(block), top * std::pow(10.0, -decades * (blocks - 1 - block) / (blocks - 1))});
    content.series = {series};
    return content;
}

// How far (in pixels) the drawn line is from where the axes' own ranges put each point: the chart is
// grabbed as an image and each point's column searched for the line's colour. The expected position
// comes from the axis objects (what the tick labels show) and the plot area, not from QtCharts' mapping.
double worstDrawnError(LinePlot& plot, const PlotContent& content, QString* worstAt) {
    QChartView* view = plot.findChild<QChartView*>();
    QChart* chart = view->chart();
    auto* x = qobject_cast<QValueAxis*>(chart->axes(Qt::Horizontal).front());
    auto* y = qobject_cast<QLogValueAxis*>(chart->axes(Qt::Vertical).front());
    if (!x || !y) return INFINITY;
    const QRectF area = chart->plotArea();
    const QImage image = plot.grab().toImage();
    double worst = 0.0;
    for (const QPointF& point : content.series.front().points) {
        const double fx = (point.x() - x->min()) / (x->max() - x->min());
        const double fy = std::log(point.y() / y->min()) / std::log(y->max() / y->min());
        const QPointF scene(area.left() + fx * area.width(), area.bottom() - fy * area.height());
        const QPoint at = view->viewport()->mapTo(&plot, view->mapFromScene(scene));
        // The nearest row of the line's colour in that column.
        double nearest = INFINITY;
        for (int row = 0; row < image.height(); ++row) {
            const QColor pixel = image.pixelColor(at.x(), row);
            if (pixel.red() > 200 && pixel.green() < 90 && pixel.blue() > 200)
                nearest = std::min(nearest, std::abs(double(row - at.y())));
        }
        if (nearest > worst) {
            worst = nearest;
            if (worstAt)
                *worstAt = QStringLiteral("block %1 = %2: axis %3..%4, %5 px off")
                               .arg(point.x())
                               .arg(point.y())
                               .arg(y->min())
                               .arg(y->max())
                               .arg(nearest);
        }
    }
    return worst;
}
}  // namespace

// PlotZoom alone: a reversed or empty span is none, setting the same span again changes nothing, a span
// reaching the newest step slides with it, one in the past stays, and the wheel's spans.
void LinePlotTest::zoomPartSpansAndFollowRule() {
    PlotZoom zoom;
    QCOMPARE(zoom.window(100.0), std::nullopt);
    QVERIFY(!zoom.set(StepSpan{40.0, 40.0}));  // empty: none, which is what is set
    QVERIFY(zoom.set(StepSpan{80.0, 100.0}));
    QVERIFY(!zoom.set(StepSpan{80.0, 100.0}));
    QVERIFY(zoom.following());
    QCOMPARE(zoom.window(130.0), (std::optional<StepSpan>{StepSpan{110.0, 130.0}}));
    QVERIFY(zoom.set(StepSpan{10.0, 30.0}));
    QVERIFY(!zoom.following());
    QCOMPARE(zoom.window(200.0), (std::optional<StepSpan>{StepSpan{10.0, 30.0}}));
    QVERIFY(zoom.set(std::nullopt));
    QVERIFY(zoom.following());
    // one notch in around step 40 of [0, 100]: 0.8 of each side; Shift pans a tenth, never past the data
    // (steps 0 to 200); zooming out as far as the data shows everything (none), never negative steps
    const auto near = [](std::optional<StepSpan> a, StepSpan b) {
        return a && std::abs(a->first - b.first) < 1e-9 && std::abs(a->second - b.second) < 1e-9;
    };
    QVERIFY(near(PlotZoom::wheelSpan(0.0, 100.0, 40.0, 1.0, false, 0.0, 200.0), {8.0, 88.0}));
    QVERIFY(near(PlotZoom::wheelSpan(0.0, 100.0, 40.0, 1.0, true, 0.0, 200.0), {0.0, 100.0}));
    QVERIFY(near(PlotZoom::wheelSpan(0.0, 100.0, 40.0, -1.0, true, 0.0, 200.0), {10.0, 110.0}));
    QVERIFY(near(PlotZoom::wheelSpan(20.0, 120.0, 30.0, -1.0, false, 0.0, 200.0), {17.5, 142.5}));
    QVERIFY(near(PlotZoom::wheelSpan(0.0, 100.0, 10.0, -1.0, false, 0.0, 200.0), {0.0, 125.0}));
    QCOMPARE(PlotZoom::wheelSpan(0.0, 100.0, 40.0, -4.0, false, 0.0, 200.0), std::nullopt);
}

// A fork's long name wraps before " / " and " (" in a narrow legend instead of running past its edge;
// its hyphens never break.
void LinePlotTest::longNamesWrapInTheLegend() {
    PlotContent content;
    for (const char* name :
         {"postln-no-warmup / fork@120 (changed) (step 150)", "preln-no-warmup (step 150)"}) {
        PlotSeries series;
        series.name = QString::fromUtf8(name);
        series.points = {{1.0, 1.0}};
        content.series.push_back(series);
    }
    QTextDocument legend;
    legend.setHtml(legendHtml(content, false));
    const double width = 200.0;  // a narrow block chart's legend, in pixels of the default font
    legend.setTextWidth(width);
    QVERIFY2(legend.idealWidth() <= width, qPrintable(QString::number(legend.idealWidth())));
    const QString text = legend.toPlainText();
    QVERIFY2(text.contains(QStringLiteral("postln\u2011no\u2011warmup")), qPrintable(text));
}

void LinePlotTest::logAxisDrawsValuesWhereItsLabelsSay() {
    // The depth lesson's gradient per block: 96 blocks over 20+ decades whose bottom end moves between
    // tiny decades as training goes on (QtCharts ignored such moves and drew the line decades off).
    LinePlot plot(QStringLiteral("Gradient per block"));
    plot.resize(720, 480);
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    for (const auto& [top, decades] : std::vector<std::pair<double, double>>{
             {1.0, 22.0}, {1.0, 16.0}, {0.3, 24.5}, {0.5, 13.0}, {2e-3, 18.0}}) {
        const PlotContent content = blockProfile(top, decades, 96);
        plot.setContent(content);
        QCoreApplication::processEvents();
        // Every finite value lies inside the axis.
        auto* y =
            qobject_cast<QLogValueAxis*>(plot.findChild<QChartView*>()->chart()->axes(Qt::Vertical).front());
        QVERIFY(y);
        for (const QPointF& point : content.series.front().points)
            QVERIFY2(
                point.y() >= y->min() && point.y() <= y->max(),
                qPrintable(QStringLiteral("%1 outside %2..%3").arg(point.y()).arg(y->min()).arg(y->max())));
        QString worstAt;
        const double worst = worstDrawnError(plot, content, &worstAt);
        QVERIFY2(worst <= 3.0,
                 qPrintable(QStringLiteral("%1 decades from %2: %3").arg(decades).arg(top).arg(worstAt)));
    }
}

QTEST_MAIN(LinePlotTest)
#include "test_line_plot.moc"
