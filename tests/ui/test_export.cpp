// Every chart exports to every format and the files parse back: PNG decodes at the asked size and
// DPI, SVG is XML holding the title and the runs' names, PDF is a one-page PDF, and CSV holds the
// chart's data exactly. The dashboard exports too, and a bad path gives a message, not a file.
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>
#include <cmath>

#include "ui/dashboard.h"
#include "ui/panels/chart_export.h"
#include "ui/panels/loss_panel.h"
#include "ui/panels/panel_export.h"
#include "ui/panels/plot_csv.h"

using namespace normlab::ui;

namespace {
// Two runs with a few hundred logged steps of made-up but distinctive values.
void fillStore(TelemetryStore& store) {
    for (int id = 0; id < 2; ++id) {
        normlab::Config config;
        config.model.layers = 3;
        config.model.norm_placement = id == 0 ? normlab::NormPlacement::Post : normlab::NormPlacement::Pre;
        store.addRun(id, id == 0 ? QStringLiteral("postrun") : QStringLiteral("prerun"), config, QString());
        RunUpdate update;
        update.runId = id;
        for (int step = 1; step <= 300; ++step) {
            normlab::StepRecord record;
            record.step = step;
            record.loss = 5.0 * std::exp(-step / 100.0) + id;
            record.lr = 1e-3 * std::min(1.0, step / 100.0);
            if (step % 50 == 0) record.val_loss = record.loss + 0.1;
            record.layers.resize(3);
            for (int b = 0; b < 3; ++b) {
                record.layers[b].resid = 1.0 + b + id;
                record.layers[b].grad = {0.1 * (b + 1), 0.2, 0.3, 0.4 * (b + 1)};
                record.layers[b].update_ratio = 1e-3 / (b + 1);
                record.layers[b].attn_entropy = 2.0;
                record.layers[b].attn_max_logit = 5.0 + b;
            }
            update.records.push_back(record);
        }
        update.events.push_back({120, "change", "lr", "train.lr", "0.0005", -1});
        update.step = 300;
        store.absorb(TelemetryBatch{{update}});
    }
}

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}
}  // namespace

class ExportTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void everyPanelExportsEveryFormat();
    void lossCsvHoldsTheData();
    void pngHonoursSizeAndDpi();
    void dashboardExports();
    void badPathOrFormatGivesMessage();

  private:
    QTemporaryDir m_dir;
    TelemetryStore m_store;
    std::unique_ptr<Dashboard> m_dashboard;
};

void ExportTest::initTestCase() {
    fillStore(m_store);
    m_dashboard = std::make_unique<Dashboard>(m_store);
    m_dashboard->resize(1400, 900);
    m_dashboard->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_dashboard.get()));
    m_dashboard->refreshNow();
}

void ExportTest::everyPanelExportsEveryFormat() {
    QCOMPARE(m_dashboard->panels().size(), size_t(7));
    for (ChartPanel* panel : m_dashboard->panels()) {
        const QString base = m_dir.filePath(panel->id());
        ImageExportOptions options;
        options.size = QSize(800, 500);
        QCOMPARE(exportPanel(*panel, base + ".png", options), QString());
        QCOMPARE(exportPanel(*panel, base + ".svg"), QString());
        QCOMPARE(exportPanel(*panel, base + ".pdf"), QString());
        QCOMPARE(exportPanel(*panel, base + ".csv"), QString());

        QImage image(base + ".png");
        QVERIFY2(!image.isNull(), qPrintable(panel->id()));
        QCOMPARE(image.width(), 800);
        QVERIFY(image.height() > 500);  // chart plus the caption band
        // Not blank: a chart has many distinct colours.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 20, qPrintable(panel->id()));

        const QByteArray svg = readAll(base + ".svg");
        QXmlStreamReader xml(svg);
        QString text;
        int paths = 0;
        while (!xml.atEnd()) {
            xml.readNext();
            if (xml.isStartElement() &&
                (xml.name() == QLatin1String("path") || xml.name() == QLatin1String("polyline")))
                ++paths;
            if (xml.isCharacters()) text += xml.text();
        }
        QVERIFY2(!xml.hasError(), qPrintable(panel->id() + ": " + xml.errorString()));
        QVERIFY2(text.contains(panel->title()), qPrintable(panel->id()));
        QVERIFY2(text.contains(QStringLiteral("postrun")),
                 qPrintable(panel->id()));  // legend, run selector or caption
        QVERIFY(paths > 5);

        const QByteArray pdf = readAll(base + ".pdf");
        QVERIFY(pdf.startsWith("%PDF-"));
        QVERIFY(pdf.trimmed().endsWith("%%EOF"));
        QCOMPARE(pdf.count("/Type /Page\n") + pdf.count("/Type /Page\r") + pdf.count("/Type /Page "), 1);

        const QByteArray csv = readAll(base + ".csv");
        QVERIFY(csv.startsWith("# " + panel->title().toUtf8()));
        QVERIFY(csv.contains("postrun"));  // the caption names the configuration
        QVERIFY(csv.count('\n') > 6);
    }
}

void ExportTest::lossCsvHoldsTheData() {
    auto* panel = static_cast<LossPanel*>(m_dashboard->panel(QStringLiteral("loss")));
    const QStringList lines = panel->csv().split('\n', Qt::SkipEmptyParts);
    int rows = 0;
    bool header = false;
    for (const QString& line : lines) {
        if (line.startsWith('#')) continue;
        if (!header) {
            QCOMPARE(line, QStringLiteral("series,axis,x,y"));
            header = true;
            continue;
        }
        const QStringList fields = line.split(',');
        QCOMPARE(fields.size(), 4);
        if (fields[0] != QStringLiteral("prerun")) continue;  // the train loss of run 1
        const double step = fields[2].toDouble();
        QCOMPARE(fields[3].toDouble(), 5.0 * std::exp(-step / 100.0) + 1);
        ++rows;
    }
    QCOMPARE(rows, 300);  // every step, not the decimated view
}

void ExportTest::pngHonoursSizeAndDpi() {
    ChartPanel& panel = *m_dashboard->panel(QStringLiteral("block_gradient"));
    ImageExportOptions options;
    options.size = QSize(2400, 1500);
    options.dpi = 300;
    const QString path = m_dir.filePath(QStringLiteral("big.png"));
    QCOMPARE(exportPanel(panel, path, options), QString());
    const QImage image(path);
    QCOMPARE(image.width(), 2400);
    QCOMPARE(std::lround(image.dotsPerMeterX() * 0.0254), 300L);
}

void ExportTest::dashboardExports() {
    const QString caption = QStringLiteral("caption");
    QCOMPARE(exportPng(*m_dashboard, caption, m_dir.filePath(QStringLiteral("dash.png")), {}), QString());
    QCOMPARE(exportSvg(*m_dashboard, QStringLiteral("dashboard"), caption,
                       m_dir.filePath(QStringLiteral("dash.svg"))),
             QString());
    QCOMPARE(exportPdf(*m_dashboard, caption, m_dir.filePath(QStringLiteral("dash.pdf"))), QString());
    QVERIFY(!QImage(m_dir.filePath(QStringLiteral("dash.png"))).isNull());
}

void ExportTest::badPathOrFormatGivesMessage() {
    ChartPanel& panel = *m_dashboard->panel(QStringLiteral("loss"));
    const QString missing = m_dir.filePath(QStringLiteral("no/such/folder/loss.png"));
    QVERIFY(exportPanel(panel, missing).contains(QStringLiteral("cannot write")));
    QVERIFY(!QFile::exists(missing));
    QVERIFY(exportPanel(panel, m_dir.filePath(QStringLiteral("loss.gif")))
                .contains(QStringLiteral(".png, .svg, .pdf or .csv")));
    ImageExportOptions tiny;
    tiny.size = QSize(10, 10);
    QVERIFY(exportPanel(panel, m_dir.filePath(QStringLiteral("tiny.png")), tiny)
                .contains(QStringLiteral("out of range")));
}

QTEST_MAIN(ExportTest)
#include "test_export.moc"
