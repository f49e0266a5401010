// A coordinate check folder (normlab-cli probe --coord-check) in the window: sizes written by hand that
// grow as width^0.5 after step 1 under a known law; the chart draws a line per step through the block
// means at each width on log axes, states each step's exponent (0 then 0.5), switches quantity, opens
// through --open at the requested size, exports its CSV with the caption, and refuses a damaged file by
// name.
#include <QComboBox>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/gui/main_window.h"
#include "engine/analysis/coord_check.h"
#include "tests/ui/ui_test_support.h"
#include "ui/plots/line_plot.h"
#include "ui/sweep/coord_check_window.h"

using normlab::ui::CoordCheckWindow;

class CoordCheckWindowTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void chartDrawsEachStepAgainstWidth();
    void openedInTheWindowAtTheRequestedSize();

  private:
    // Block b's size at width w and step t (1-based): flat at step 1, then (w / 32)^0.5 times larger.
    static double size(int width, int step, int block) {
        return (1.0 + 0.1 * block) * (step == 1 ? 1.0 : std::sqrt(width / 32.0)) * step;
    }
    QTemporaryDir m_dir;
    QString m_check;
};

void CoordCheckWindowTest::initTestCase() {
    m_check = m_dir.filePath(QStringLiteral("coord"));
    normlab::CoordCheckResult result;
    result.widths = {32, 64, 128};
    result.steps = 3;
    result.seeds = 2;
    result.blocks = 2;
    result.parametrization = normlab::Parametrization::Sp;
    result.base_width = 32;
    for (const normlab::CoordQuantity& quantity : normlab::kCoordQuantities) {
        auto& values = result.values.emplace_back();
        for (int width : result.widths) {
            auto& steps = values.emplace_back();
            for (int t = 1; t <= result.steps; ++t) {
                auto& blocks = steps.emplace_back();
                for (int b = 0; b < (quantity.per_block ? result.blocks : 1); ++b)
                    blocks.push_back(size(width, t, b));
            }
        }
        result.exponents.emplace_back(result.steps, 0.0);  // to_json writes them; the reader recomputes
    }
    std::filesystem::create_directories(m_check.toStdString());
    std::ofstream(m_check.toStdString() + "/coord_check.json") << normlab::to_json(result).dump(2);
}

void CoordCheckWindowTest::chartDrawsEachStepAgainstWidth() {
    CoordCheckWindow window(m_check);
    const normlab::ui::PlotContent& content = window.plot().content();
    QVERIFY(content.x.log && content.y.log);
    QCOMPARE(content.series.size(), size_t(3));
    for (int t = 1; t <= 3; ++t) {
        const normlab::ui::PlotSeries& series = content.series[static_cast<size_t>(t - 1)];
        QCOMPARE(series.points.size(), 3);
        for (int w = 0; w < 3; ++w) {
            const int width = 32 << w;
            QCOMPARE(series.points[w].x(), double(width));
            const double mean = (size(width, t, 0) + size(width, t, 1)) / 2;
            QVERIFY(std::abs(series.points[w].y() - mean) < 1e-12);
        }
    }
    QCOMPARE(window.result().exponents[0].size(), size_t(3));
    QVERIFY(std::abs(window.result().exponents[0][0]) < 1e-12);
    QVERIFY(std::abs(window.result().exponents[0][1] - 0.5) < 1e-12);
    QVERIFY2(content.note.contains(QStringLiteral("0.000, 0.500, 0.500")), qPrintable(content.note));
    // the model-level quantity has one value per width and step
    window.showQuantity(3);
    QCOMPARE(window.findChild<QComboBox*>(QStringLiteral("coordCheckQuantity"))->currentIndex(), 3);
    QCOMPARE(window.plot().content().series[1].points[2].y(), size(128, 2, 0));
    QVERIFY(window.caption().contains(QStringLiteral("sp at widths 32, 64, 128 (base width 32), 3 steps")));
    QVERIFY(window.csv().contains(QStringLiteral("# ") + window.caption()));
}

void CoordCheckWindowTest::openedInTheWindowAtTheRequestedSize() {
    normlab::gui::MainWindow window;
    window.setRequestedSize(QSize(1200, 760));
    QCOMPARE(window.openRunFolders({m_check}), QStringList());
    auto* chart = window.findChild<CoordCheckWindow*>();
    QVERIFY(chart && chart->isVisible());
    const QString shot = m_dir.filePath(QStringLiteral("coord.png"));
    QCOMPARE(window.saveScreenshot(shot), QString());
    QCOMPARE(QImage(shot).size(), QSize(1200, 760));
    // A file that only looks like one is refused, naming the file and the field.
    const QString fake = m_dir.filePath(QStringLiteral("fake"));
    QDir().mkpath(fake);
    QFile file(fake + QStringLiteral("/coord_check.json"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"widths": [32, 64], "steps": 2, "seeds": 1, "blocks": 1, "base_width": 32,
                   "parametrization": "mup", "quantities": {}})");
    file.close();
    const QStringList problems = window.openRunFolders({fake});
    QCOMPARE(problems.size(), 1);
    QVERIFY2(problems.front().contains(QStringLiteral("coord_check.json")) &&
                 problems.front().contains(QStringLiteral("resid_rms")),
             qPrintable(problems.front()));
}

QTEST_MAIN(CoordCheckWindowTest)
#include "test_coord_check_window.moc"
