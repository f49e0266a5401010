// The stability map: a sweep folder whose points were written by hand (final, initial losses, one
// diverged lr) shows, in every cell, the mean over seeds of min(final, initial) that the collected
// points.csv gives; diverged, running and to-do points are counted where they belong; a click on a
// cell asks to open exactly its runs; the grid's CSV and the figure export hold the same values.
#include <QDateTime>
#include <QSignalSpy>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/sweep/sweep_collect.h"
#include "ui/export/chart_export.h"
#include "ui/plots/colour_map.h"
#include "ui/sweep/sweep_map_view.h"
#include "ui/sweep/sweep_map_window.h"

using normlab::ui::SweepMapView;
using normlab::ui::SweepMapWindow;

class SweepMapTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void cellsAreTheCollectedClampedMeans();
    void clickOpensTheCellsRuns();
    void unfinishedPointsAreCountedNotDrawn();
    void exportsTheGridAndTheFigure();
    void aRelativeScaleSpreadsTheColoursNearTheBest();

  private:
    QTemporaryDir m_dir;
    QString m_sweep;
    normlab::SweepPlan m_plan;
};

namespace {
void writeFile(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

// lr 1 diverges for post; everything else finishes with a loss that depends on lr, placement and seed.
std::optional<double> handFinal(double lr, const std::string& placement, uint64_t seed) {
    if (lr == 1.0 && placement == "post") return std::nullopt;
    return (lr == 0.001  ? 4.0
            : lr == 0.01 ? 3.0
                         : 6.0) +
           (placement == "pre" ? 0.1 : 0.0) + 0.2 * double(seed - 1);
}
constexpr double kInitial = 5.5;
}  // namespace

void SweepMapTest::initTestCase() {
    const nlohmann::ordered_json spec = nlohmann::ordered_json::parse(R"({
        "base": {"preset": "quickstart", "set": {"model.layers": 2}},
        "axes": {"train.lr": [0.001, 0.01, 1], "model.norm_placement": ["post", "pre"]},
        "seeds": 2, "steps": 10})");
    m_plan = normlab::plan_sweep(normlab::sweep_spec_from_json(spec));
    m_sweep = m_dir.filePath(QStringLiteral("sweep"));
    normlab::write_sweep(m_sweep.toStdString(), m_plan);
    for (const normlab::SweepPoint& point : m_plan.points) {
        const std::string folder = normlab::point_folder(m_sweep.toStdString(), point);
        std::filesystem::create_directories(folder);
        const std::optional<double> final =
            handFinal(point.set["train.lr"].get<double>(),
                      point.set["model.norm_placement"].get<std::string>(), point.seed);
        writeFile(folder + "/config.json", "{}");
        writeFile(folder + "/metrics.jsonl", "{\"step\": 1, \"loss\": " + std::to_string(kInitial) + "}\n");
        nlohmann::json summary = {{"status", final ? "completed" : "diverged"}, {"steps", 10}};
        summary["final_loss"] = final ? nlohmann::json(*final) : nlohmann::json(nullptr);
        if (!final) summary["diverged_at"] = 3;
        writeFile(folder + "/summary.json", summary.dump());
    }
}

void SweepMapTest::cellsAreTheCollectedClampedMeans() {
    SweepMapWindow window(m_sweep);
    window.refreshNow();
    const normlab::ui::SweepMapContent& map = window.map().content();
    QCOMPARE(map.xLabels,
             (QStringList{QStringLiteral("0.001"), QStringLiteral("0.01"), QStringLiteral("1")}));
    QCOMPARE(map.yLabels, (QStringList{QStringLiteral("post"), QStringLiteral("pre")}));
    QCOMPARE(map.facets.size(), size_t(1));
    // Independently of the map code: the clamped means from the points as collect reports them.
    const std::vector<normlab::CollectedPoint> points = normlab::collect_sweep(m_sweep.toStdString(), m_plan);
    std::stringstream csv;
    normlab::write_points_csv(m_plan, points, csv);
    std::map<std::pair<std::string, std::string>, std::vector<double>> clamped;
    std::string line;
    std::getline(csv, line);  // header
    while (std::getline(csv, line)) {
        std::vector<std::string> cells;
        std::stringstream row(line);
        for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
        // index,id,train.lr,model.norm_placement,seed,status,steps,final_loss,final_val_loss,initial_loss,...
        const double initial = std::stod(cells[9]);
        const double value = cells[5] == "diverged" ? initial : std::min(std::stod(cells[7]), initial);
        clamped[{cells[2], cells[3]}].push_back(value);
    }
    for (qsizetype y = 0; y < map.yLabels.size(); ++y)
        for (qsizetype x = 0; x < map.xLabels.size(); ++x) {
            const auto& values = clamped.at({map.xLabels[x].toStdString(), map.yLabels[y].toStdString()});
            const double mean = (values[0] + values[1]) / 2.0;
            const normlab::ui::MapCell& cell = map.facets[0].cells[y][x];
            QVERIFY2(cell.value.has_value(), qPrintable(map.xLabels[x] + map.yLabels[y]));
            QCOMPARE(*cell.value, mean);
            QCOMPARE(cell.done + cell.diverged, 2);
            // Two seeds: the 95% t interval with 1 dof, mean -+ t_{0.975,1} |a - b| / 2.
            const double half = 12.7062047361747 * std::abs(values[0] - values[1]) / 2.0;
            QCOMPARE(cell.seeds, 2);
            QVERIFY(cell.ciLow && std::abs(*cell.ciLow - (mean - half)) < 1e-9);
            QVERIFY(cell.ciHigh && std::abs(*cell.ciHigh - (mean + half)) < 1e-9);
        }
    // The best cell is ringed; a cell is marked near it exactly when the two intervals overlap.
    const normlab::ui::MapCell& best = map.facets[0].cells[0][1];
    QVERIFY(best.best && !best.nearBest);
    for (const auto& row : map.facets[0].cells)
        for (const normlab::ui::MapCell& cell : row)
            if (&cell != &best)
                QCOMPARE(cell.nearBest, *cell.ciLow <= *best.ciHigh && *best.ciLow <= *cell.ciHigh);
    // The hand-written figures: lr 1 post diverged (both seeds at the initial loss); lr 1 pre clamps
    // 6.1 and 6.3 at 5.5; lr 0.01 post (3.0 and 3.2) is the best cell and the bottom of the colours.
    QCOMPARE(map.facets[0].cells[0][2].diverged, 2);
    QCOMPARE(*map.facets[0].cells[0][2].value, kInitial);
    QCOMPARE(*map.facets[0].cells[1][2].value, kInitial);
    QCOMPARE(*map.facets[0].cells[1][1].value, 3.2);
    QCOMPARE(map.low, 3.1);
    QCOMPARE(map.high, kInitial);
}

void SweepMapTest::clickOpensTheCellsRuns() {
    SweepMapWindow window(m_sweep);
    window.resize(1000, 800);
    window.show();
    window.refreshNow();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy opened(&window, &SweepMapWindow::openRunsRequested);
    const QRectF cell = window.map().cellRect({0, 1, 0});  // pre, lr 0.001
    QTest::mouseClick(&window.map(), Qt::LeftButton, {}, cell.center().toPoint());
    QCOMPARE(opened.size(), 1);
    const QStringList folders = opened.front().front().toStringList();
    QCOMPARE(folders.size(), 2);
    for (const normlab::SweepPoint& point : m_plan.points)
        if (point.set["train.lr"] == 0.001 && point.set["model.norm_placement"] == "pre")
            QVERIFY(folders.contains(
                QString::fromStdString(normlab::point_folder(m_sweep.toStdString(), point))));
}

void SweepMapTest::unfinishedPointsAreCountedNotDrawn() {
    // A copy of the sweep where one point has no run folder yet and another is claimed by a live worker.
    const QString other = m_dir.filePath(QStringLiteral("partial"));
    normlab::write_sweep(other.toStdString(), m_plan);
    const normlab::SweepPoint& running = m_plan.points[0];
    std::filesystem::create_directories(other.toStdString() + "/claims");
    writeFile(other.toStdString() + "/claims/" + running.id + ".json",
              nlohmann::json{{"host", QSysInfo::machineHostName().toStdString()},
                             {"pid", QCoreApplication::applicationPid()},
                             {"heartbeat", double(QDateTime::currentSecsSinceEpoch())}}
                  .dump());
    SweepMapWindow window(other);
    window.refreshNow();
    const normlab::ui::MapCell& first = window.map().content().facets[0].cells[0][0];
    QCOMPARE(first.running, 1);
    QCOMPARE(first.todo, 1);
    QVERIFY(!first.value.has_value());
    QCOMPARE(window.progress(), std::make_pair(0, 12));
}

void SweepMapTest::exportsTheGridAndTheFigure() {
    SweepMapWindow window(m_sweep);
    window.refreshNow();
    const QString csv = window.csv();
    QVERIFY2(csv.contains(QStringLiteral(",pre,0.01,3.2,2,0,0,0,0,2,")), qPrintable(csv));
    QVERIFY(
        csv.contains(QStringLiteral(",post,1,5.5,0,2,0,0,0,2,5.5,5.5,no\n")));  // both at the initial loss
    QVERIFY(csv.contains(QStringLiteral(",post,0.01,3.1,2,0,0,0,0,2,")));
    QVERIFY(csv.contains(QStringLiteral(",best\n")));
    QVERIFY(window.hasSensitivity());
    const QString png = m_dir.filePath(QStringLiteral("map.png"));
    normlab::ui::ImageExportOptions options;
    options.size = QSize(1200, 900);
    QCOMPARE(normlab::ui::exportFigure(window.figure(), png, options), QString());
    const QImage image(png);
    QCOMPARE(image.size(), QSize(1200, 900));
}

// The option that makes small differences visible: colours from the best cell (3.1) to 10% above it, so
// the cell at 3.2 (+3.2%) sits a third of the way up instead of 4% of the way to the initial loss (5.5).
void SweepMapTest::aRelativeScaleSpreadsTheColoursNearTheBest() {
    SweepMapWindow window(m_sweep);
    window.resize(1200, 700);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.refreshNow();
    const SweepMapView::CellIndex near{0, 1, 1};
    QCOMPARE(*window.map().content().facets[0].cells[1][1].value, 3.2);
    const auto drawnColour = [&] {
        const QImage image = window.map().grab().toImage();
        // near a corner: the centre may hold the near-best dot
        return QColor(image.pixel((window.map().cellRect(near).topLeft() + QPointF(5, 5)).toPoint()));
    };
    const auto close = [](const QColor& a, const QColor& b) {
        return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green()) +
                   std::abs(a.blue() - b.blue()) <=
               6;
    };
    const QColor absolute = drawnColour();
    QVERIFY(close(absolute, normlab::ui::viridis((3.2 - 3.1) / (kInitial - 3.1))));

    window.setRelativeSpan(0.10);
    const auto& content = window.map().content();
    QCOMPARE(content.relativeSpan, 0.10);
    QCOMPARE(content.low, 3.1);
    QVERIFY(std::abs(content.high - 3.41) < 1e-12);
    const QColor relative = drawnColour();
    QVERIFY2(close(relative, normlab::ui::viridis((3.2 - 3.1) / 0.31)), qPrintable(relative.name()));
    QVERIFY(!close(relative, absolute));
    QVERIFY(window.map().colourBarLabel(3.1, false).startsWith(QStringLiteral("best")));
    QCOMPARE(window.map().colourBarLabel(3.1 * 1.05, false), QStringLiteral("+5%"));
    QCOMPARE(window.map().colourBarLabel(3.41, true), QStringLiteral("\u2265 +10%"));
    QVERIFY(window.caption().contains(QStringLiteral("10% above it")));
    window.setRelativeSpan(0.0);
    QCOMPARE(window.map().content().high, kInitial);
}

QTEST_MAIN(SweepMapTest)
#include "test_sweep_map.moc"
