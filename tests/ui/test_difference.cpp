// The difference chart: seriesDifference matches steps exactly (and only those both runs hold), and
// DifferencePanel draws B - A in B's colour over a zero line, defaults B to the second run shown (also
// when it arrives after the chart was built), keeps a chosen run, and takes a per-block quantity.
#include <QComboBox>
#include <QSpinBox>
#include <QTest>

#include "ui/history/series_difference.h"
#include "ui/panels/difference_panel.h"

using normlab::ui::DecimatedSeries;

class DifferenceTest : public QObject {
    Q_OBJECT
  private slots:
    void differencesAreTakenAtStepsBothRunsHold();
    void panelDrawsBMinusAOfTheChosenQuantity();
};

void DifferenceTest::differencesAreTakenAtStepsBothRunsHold() {
    DecimatedSeries a, b, evenOnly;
    for (int step = 1; step <= 10; ++step) {
        a.append(step, 0.5 * step);
        b.append(step, 2.0 * step);
        if (step % 2 == 0) evenOnly.append(step, 100.0);
    }
    const QVector<QPointF> all = normlab::ui::seriesDifference(a, b);
    QCOMPARE(all.size(), 10);
    for (int i = 0; i < 10; ++i) QCOMPARE(all[i], QPointF(i + 1, 1.5 * (i + 1)));
    const QVector<QPointF> even = normlab::ui::seriesDifference(a, evenOnly);
    QCOMPARE(even.size(), 5);
    QCOMPARE(even.front(), QPointF(2, 99.0));
    QCOMPARE(even.back(), QPointF(10, 95.0));
    QVERIFY(normlab::ui::seriesDifference(a, DecimatedSeries()).isEmpty());
}

void DifferenceTest::panelDrawsBMinusAOfTheChosenQuantity() {
    normlab::ui::TelemetryStore store;
    normlab::ui::DifferencePanel panel(store);
    store.addRun(0, QStringLiteral("parent"), normlab::Config{}, QString());
    QVERIFY(panel.buildContent(100).series.empty());  // one run: nothing to subtract
    QVERIFY(panel.buildContent(100).emptyText.contains(QStringLiteral("two different runs")));
    store.addRun(1, QStringLiteral("fork"), normlab::Config{}, QString());
    for (int step = 1; step <= 20; ++step) {
        store.run(0)->loss.append(step, 3.0);
        store.run(1)->loss.append(step, step <= 10 ? 3.0 : 3.0 - 0.1 * (step - 10));
    }
    normlab::ui::PlotContent content = panel.buildContent(100);
    QCOMPARE(content.series.size(), size_t(2));
    const normlab::ui::PlotSeries& zero = content.series[0];
    QCOMPARE(zero.points, (QVector<QPointF>{{1, 0.0}, {20, 0.0}}));
    const normlab::ui::PlotSeries& difference = content.series[1];
    QCOMPARE(difference.name, QStringLiteral("fork - parent"));
    QCOMPARE(difference.colour, store.run(1)->colour);
    QCOMPARE(difference.points.size(), 20);
    QCOMPARE(difference.points[9], QPointF(10, 0.0));
    QCOMPARE(difference.points[19].y(), 3.0 - 0.1 * 10 - 3.0);
    QCOMPARE(panel.shownTitle(), QStringLiteral("Difference B - A: loss (fork - parent)"));
    // The narrow run boxes name their run whole on hover (a fork and its parent once looked alike).
    QCOMPARE(panel.findChild<QComboBox*>(QStringLiteral("differenceB"))->toolTip(),
             QStringLiteral("Which run this chart shows: fork"));

    // A run chosen as A stays chosen when another run arrives; a per-block quantity reads that block.
    auto* first = panel.findChild<QComboBox*>(QStringLiteral("differenceA"));
    first->setCurrentIndex(first->findData(1));
    store.addRun(2, QStringLiteral("third"), normlab::Config{}, QString());
    QCOMPARE(first->currentData().toInt(), 1);
    auto* quantity = panel.findChild<QComboBox*>(QStringLiteral("differenceQuantity"));
    quantity->setCurrentIndex(quantity->findText(QStringLiteral("update / parameter ratio at block")));
    auto* block = panel.findChild<QSpinBox*>(QStringLiteral("differenceBlock"));
    QVERIFY(block->isEnabled());
    block->setValue(1);
    for (int id : {1, 2}) store.run(id)->updateRatio.resize(2);
    store.run(1)->updateRatio[1].append(5, 0.01);
    store.run(2)->updateRatio[1].append(5, 0.04);
    auto* second = panel.findChild<QComboBox*>(QStringLiteral("differenceB"));
    second->setCurrentIndex(second->findData(2));
    content = panel.buildContent(100);
    QCOMPARE(content.y.title, QStringLiteral("B - A: update / parameter ratio at block 1"));
    QCOMPARE(content.series.back().points, (QVector<QPointF>{{5, 0.04 - 0.01}}));
    block->setValue(7);  // no such block
    QVERIFY(panel.buildContent(100).series.empty());
}

QTEST_MAIN(DifferenceTest)
#include "test_difference.moc"
