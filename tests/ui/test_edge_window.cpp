// An edge search folder (normlab-cli sweep edge) in the window: probes written by hand where the run
// trains iff its lr is below a known edge per (norm, seed); the edge chart marks each variant's edge
// within the 5% resolution of the geometric mean of the true edges, shades its interval, draws the
// diverged probes as NaN marks, and states the paired ratio (1.5 by construction) in the words
// `sweep edge` prints; --open on the folder shows it, at --size, and its CSV carries the same words.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "app/gui/main_window.h"
#include "engine/sweep/edge_folder.h"
#include "engine/sweep/edge_report.h"
#include "engine/sweep/sweep_folder.h"
#include "tests/ui/ui_test_support.h"
#include "ui/plots/line_plot.h"
#include "ui/sweep/edge_window.h"

using normlab::ui::EdgeWindow;

class EdgeWindowTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void chartMarksEachEdgeAndTheRatio();
    void openedInTheWindowAtTheRequestedSize();

  private:
    // The lr edge of a variant and seed: rmsnorm's is 1.5 times layernorm's for every seed.
    static double trueEdge(const std::string& variant, uint64_t seed) {
        return (variant == "rmsnorm" ? 0.3 : 0.2) * (1.0 + 0.1 * static_cast<double>(seed));
    }
    QTemporaryDir m_dir;
    QString m_edge;
};

void EdgeWindowTest::initTestCase() {
    namespace fs = std::filesystem;
    m_edge = m_dir.filePath(QStringLiteral("edge"));
    const std::string dir = m_edge.toStdString();
    const normlab::EdgeSpec spec = normlab::edge_spec_from_json(nlohmann::ordered_json::parse(R"({
        "format": "normlab-edge", "version": 1, "base": {"preset": "quickstart"}, "steps": 10,
        "axis": {"key": "train.lr", "low": 0.01, "high": 3.0},
        "vary": {"key": "model.norm_type", "values": ["layernorm", "rmsnorm"]},
        "seeds": [1, 2, 3], "criterion": "diverged", "tolerance": 0.05})"),
                                                                "test");
    normlab::write_edge_spec(dir, spec);
    // Each round, every search still probing gets its probes "run": written as a finished run would be.
    for (bool probing = true; probing;) {
        probing = false;
        for (const normlab::EdgeSearchRef& search : normlab::edge_searches(spec)) {
            const normlab::EdgeSearchState state = normlab::read_edge_search(dir, spec, search);
            if (state.status != normlab::EdgeStatus::Probing) continue;
            probing = true;
            const normlab::SweepPlan plan = normlab::plan_edge_probes(dir, spec, search, state.wanted);
            for (double lr : state.wanted) {
                const std::string folder = normlab::point_folder(
                    (fs::path(dir) / search.folder).string(), normlab::edge_probe_point(plan, spec.key, lr));
                fs::create_directories(folder);
                const bool trains = lr < trueEdge(search.label, search.seed);
                std::ofstream(folder + "/config.json") << "{}";
                std::ofstream(folder + "/metrics.jsonl") << "{\"step\": 1, \"loss\": 5.5}\n";
                std::ofstream(folder + "/summary.json")
                    << (trains ? "{\"status\": \"completed\", \"steps\": 10, \"final_loss\": " +
                                     std::to_string(2.0 + lr) + "}"
                               : std::string("{\"status\": \"diverged\", \"steps\": 3, \"diverged_at\": 3, "
                                             "\"final_loss\": null}"));
            }
        }
    }
}

void EdgeWindowTest::chartMarksEachEdgeAndTheRatio() {
    EdgeWindow window(m_edge);
    QVERIFY(window.report().finished);
    const normlab::ui::PlotContent& content = window.plot().content();
    QCOMPARE(content.markers.size(), size_t(2));
    QCOMPARE(content.bands.size(), size_t(2));
    QCOMPARE(content.series.size(), size_t(6));  // 2 variants x 3 seeds
    for (size_t v = 0; v < 2; ++v) {
        const std::string variant = v == 0 ? "layernorm" : "rmsnorm";
        const double geometric =
            std::cbrt(trueEdge(variant, 1) * trueEdge(variant, 2) * trueEdge(variant, 3));
        const double marked = content.markers[v].x;
        QVERIFY2(marked < geometric && marked > geometric / 1.05, qPrintable(QString::number(marked)));
        QVERIFY(content.bands[v].lower.front().x() < marked && content.bands[v].lower.back().x() > marked);
    }
    // Every seed's last probe above its edge diverged: drawn as a NaN mark (an infinite value).
    int diverged = 0;
    for (const normlab::ui::PlotSeries& series : content.series)
        for (const QPointF& point : series.points) diverged += std::isinf(point.y()) ? 1 : 0;
    QVERIFY(diverged >= 6);
    QCOMPARE(window.report().ratios.size(), size_t(1));
    const double ratio = std::exp(window.report().ratios.front().log_ratio.mean);
    QVERIFY2(std::abs(ratio - 1.5) < 0.08, qPrintable(QString::number(ratio)));
    const QString words = QString::fromStdString(normlab::edge_ratio_text(window.report().ratios.front()));
    QVERIFY2(words.startsWith(QStringLiteral("rmsnorm/layernorm edge ratio 1.")), qPrintable(words));
    QVERIFY(content.note.contains(words));
    QVERIFY(window.csv().contains(QStringLiteral("# ") + words));
}

void EdgeWindowTest::openedInTheWindowAtTheRequestedSize() {
    normlab::gui::MainWindow window;
    window.setRequestedSize(QSize(1300, 800));
    QCOMPARE(window.openRunFolders({m_edge}), QStringList());
    auto* chart = window.findChild<EdgeWindow*>();
    QVERIFY(chart && chart->isVisible());
    const QString shot = m_dir.filePath(QStringLiteral("edge.png"));
    QCOMPARE(window.saveScreenshot(shot), QString());
    QCOMPARE(QImage(shot).size(), QSize(1300, 800));
    // A folder that only looks like one is refused by name.
    const QString fake = m_dir.filePath(QStringLiteral("fake"));
    QDir().mkpath(fake);
    QFile(fake + QStringLiteral("/edge.json")).open(QIODevice::WriteOnly);
    const QStringList problems = window.openRunFolders({fake});
    QCOMPARE(problems.size(), 1);
    QVERIFY2(problems.front().contains(QStringLiteral("edge.json")), qPrintable(problems.front()));
}

QTEST_MAIN(EdgeWindowTest)
#include "test_edge_window.moc"
