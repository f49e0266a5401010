// Every chart exports to every format and the files parse back as the figure asked: PNG at exactly
// the asked size and DPI on an opaque background (or transparent by choice), SVG and PDF holding the
// chart's title and every run's caption line as text, CSV the chart's data exactly. A known caption
// renders every line; the dashboard figure holds the charts only (no selectors); a bad path, size or
// caption that cannot fit gives a message, not a file.
#include <sys/resource.h>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QPainter>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>
#include <cmath>
#include <csignal>

#include "engine/config/presets.h"
#include "ui/dashboard.h"
#include "ui/experiment/experiment_file.h"
#include "ui/export/chart_export.h"
#include "ui/export/panel_export.h"
#include "ui/export/plot_csv.h"
#include "ui/panels/loss_panel.h"
#include "ui/panels/run_captions.h"

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
            record.telemetry =
                normlab::StepTelemetry{0.0, 5.0 + 0.01 * step + id, 6.0, -0.5 - 0.002 * step, 9.0, 0.3, 0.2};
            record.layers.resize(3);
            for (int b = 0; b < 3; ++b) {
                record.layers[b].resid = 1.0 + b + id;
                record.layers[b].grad = {0.1 * (b + 1), 0.2, 0.3, 0.4 * (b + 1)};
                record.layers[b].update_ratio = 1e-3 / (b + 1);
                record.layers[b].attn_entropy = 2.0;
                record.layers[b].attn_max_logit = 5.0 + b;
                record.layers[b].q_rms = 1.0 + 0.01 * step;
                record.layers[b].k_rms = 0.5 + 0.002 * step * (b + 1);
                record.layers[b].update_rms = 1e-4 * (b + 1) / (1.0 + 0.01 * step);
                record.layers[b].adam_grad_rms = 1e-2 / (b + 1);
                record.layers[b].norm1_scale_mean = 1.0 / (1.0 + b + 0.001 * step);
                record.layers[b].norm2_scale_mean = 0.8 / (1.0 + b + 0.001 * step);
                record.layers[b].grad_underflow = 0.5 / (1.0 + b + 0.01 * step);  // as a run in fp16 logs
                record.layers[b].act_underflow = 1e-4 * (b + 1);
                record.layers[b].grad_overflow = record.layers[b].act_overflow = 0.0;
                record.layers[b].stream_headroom = 13.0 - 0.5 * b;
                record.layers[b].contribution_attn = 0.3 / (1.0 + b + 0.001 * step);
                record.layers[b].contribution_ffn = 0.5 / (1.0 + b);
                for (int h = 0; h < 2; ++h) record.attn_head_max_logit.push_back((5.0 + b) * (1.0 - 0.1 * h));
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

// The text of an SVG file (its character data), or "(invalid: ...)".
QString svgText(const QString& path) {
    QXmlStreamReader xml(readAll(path));
    QString text;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isCharacters()) text += xml.text();
    }
    return xml.hasError() ? QStringLiteral("(invalid: %1)").arg(xml.errorString()) : text;
}

// The text of a PDF file as poppler's pdftotext reads it (a test dependency: poppler-utils).
QString pdfText(const QString& path) {
    QProcess process;
    process.start(QStringLiteral("pdftotext"), {QStringLiteral("-layout"), path, QStringLiteral("-")});
    if (!process.waitForFinished(30000) || process.exitCode() != 0)
        return QStringLiteral("(pdftotext failed: install poppler-utils)");
    // NFKC: the PDF's typographic ligatures ("ﬀ") read back as their letters.
    return QString::fromUtf8(process.readAllStandardOutput()).normalized(QString::NormalizationForm_KC);
}

// Rows of the image that hold dark (text) pixels, grouped into runs of adjacent rows: one per text line.
int darkRowRuns(const QImage& image) {
    int runs = 0;
    bool previous = false;
    for (int y = 0; y < image.height(); ++y) {
        bool dark = false;
        for (int x = 0; x < image.width() && !dark; ++x) dark = qGray(image.pixel(x, y)) < 128;
        if (dark && !previous) ++runs;
        previous = dark;
    }
    return runs;
}

// Every caption line of the store's visible runs ("name: summary").
QStringList captionLines(const ChartPanel& panel) {
    return panel.caption().split('\n', Qt::SkipEmptyParts);
}
}  // namespace

class ExportTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void everyPanelExportsEveryFormat();
    void lossCsvHoldsTheData();
    void captionNamesTheDifferences();
    void notesAreDrawnInFigures();
    void vectorFiguresHaveThePhysicalSize();
    void knownCaptionRendersEveryLine();
    void pngHonoursSizeAndDpi();
    void dashboardFigureHasChartsOnly();
    void badPathOrFormatGivesMessage();
    void fullDiskLeavesTheOldFile();

  private:
    QTemporaryDir m_dir;
    TelemetryStore m_store;
    std::unique_ptr<Dashboard> m_dashboard;
};

void ExportTest::initTestCase() {
    // To look at the exported files: NORMLAB_KEEP_EXPORTS=1 keeps the folder (its path is printed).
    if (qEnvironmentVariableIsSet("NORMLAB_KEEP_EXPORTS")) {
        m_dir.setAutoRemove(false);
        qInfo("exports in %s", qPrintable(m_dir.path()));
    }
    fillStore(m_store);
    m_dashboard = std::make_unique<Dashboard>(m_store);
    m_dashboard->resize(1400, 900);
    m_dashboard->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_dashboard.get()));
    m_dashboard->refreshNow();
}

void ExportTest::everyPanelExportsEveryFormat() {
    QCOMPARE(m_dashboard->panels().size(), size_t(16));
    // A figure too short for its chart above the caption is refused, saying what to change (drawn, the
    // chart's legend overlapped the caption), and nothing is written.
    ImageExportOptions tooShort;
    tooShort.size = QSize(800, 400);
    const QString refused = m_dir.filePath(QStringLiteral("too-short.png"));
    const QString error = exportPanel(*m_dashboard->panel(QStringLiteral("loss")), refused, tooShort);
    QVERIFY2(error.contains(QStringLiteral("make the figure taller")), qPrintable(error));
    QVERIFY(!QFile::exists(refused));
    for (ChartPanel* panel : m_dashboard->panels()) {
        const QString base = m_dir.filePath(panel->id());
        ImageExportOptions options;
        // Tall enough for the chart above a caption of five lines (two runs, each with a live change).
        options.size = QSize(800, 640);
        QCOMPARE(exportPanel(*panel, base + ".png", options), QString());
        QCOMPARE(exportPanel(*panel, base + ".svg", options), QString());
        QCOMPARE(exportPanel(*panel, base + ".pdf", options), QString());
        QCOMPARE(exportPanel(*panel, base + ".csv"), QString());

        QImage image(base + ".png");
        QVERIFY2(!image.isNull(), qPrintable(panel->id()));
        QCOMPARE(image.size(), options.size);  // exactly as asked, caption included
        // Not blank, and opaque everywhere.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7) {
                colours.insert(image.pixel(x, y));
                QCOMPARE(qAlpha(image.pixel(x, y)), 255);
            }
        QVERIFY2(colours.size() > 20, qPrintable(panel->id()));
        // The corner above the axes is background: no stray labels of axes made before layout.
        for (int y = 0; y < 16; ++y)
            for (int x = 0; x < 16; ++x)
                QVERIFY2(image.pixel(x, y) == qRgb(255, 255, 255), qPrintable(panel->id()));

        // The title and every run's caption line are drawn as text in SVG and PDF.
        const QString svg = svgText(base + ".svg");
        const QString pdf = pdfText(base + ".pdf").simplified();
        QVERIFY2(svg.contains(panel->title()), qPrintable(panel->id() + ": " + svg.left(200)));
        QVERIFY2(pdf.contains(panel->title()), qPrintable(panel->id() + ": " + pdf.left(400)));
        for (const QString& line : captionLines(*panel)) {
            QVERIFY2(svg.contains(line), qPrintable(panel->id() + " SVG lacks: " + line));
            QVERIFY2(pdf.contains(line.simplified()), qPrintable(panel->id() + " PDF lacks: " + line));
        }
        const QByteArray pdfBytes = readAll(base + ".pdf");
        QCOMPARE(pdfBytes.count("/Type /Page\n") + pdfBytes.count("/Type /Page\r") +
                     pdfBytes.count("/Type /Page "),
                 1);

        const QByteArray csv = readAll(base + ".csv");
        QVERIFY(csv.startsWith("# " + panel->title().toUtf8()));
        QVERIFY(csv.contains("postrun"));  // the caption names the configuration
        QVERIFY(csv.count('\n') > 6);
    }
    // A chart of one run at a time says which run it shows, in the figure and in its data.
    for (const QString& id : {QStringLiteral("attention_logits"), QStringLiteral("update_ratio")}) {
        const ChartPanel* single = m_dashboard->panel(id);
        const QString named = single->title() + QStringLiteral(": postrun");
        // (the legend keeps its words together with non-breaking spaces)
        QVERIFY2(svgText(m_dir.filePath(id) + ".svg").simplified().contains(QStringLiteral("run: postrun")),
                 qPrintable(id));
        QVERIFY2(single->csv().contains(named), qPrintable(named));
    }
}

void ExportTest::notesAreDrawnInFigures() {
    auto* panel = static_cast<LossPanel*>(m_dashboard->panel(QStringLiteral("loss")));
    panel->setAnnotations({{150.0, 2.0, QStringLiteral("warmup ends here")}});
    const QString path = m_dir.filePath(QStringLiteral("noted.svg"));
    QCOMPARE(exportPanel(*panel, path), QString());
    QVERIFY(svgText(path).contains(QStringLiteral("warmup ends here")));
    panel->setAnnotations({});
    QCOMPARE(exportPanel(*panel, path), QString());
    QVERIFY(!svgText(path).contains(QStringLiteral("warmup ends here")));
}

void ExportTest::captionNamesTheDifferences() {
    // The two runs differ only in their placement: that, and nothing else, is named first.
    const std::map<int, QString> differences = differencesByRun(m_store);
    QCOMPARE(differences.at(0), QStringLiteral("model.norm_placement=post"));
    QCOMPARE(differences.at(1), QStringLiteral("model.norm_placement=pre"));
    QCOMPARE(captionForRuns(m_store).section('\n', 0, 0),
             QStringLiteral("Differs: postrun model.norm_placement=post; prerun model.norm_placement=pre"));
    // A fork and its parent start alike: what the fork switched to is the difference (a slide's line).
    TelemetryStore forks;
    for (int id = 0; id < 2; ++id) {
        forks.addRun(id, id == 0 ? QStringLiteral("stuck") : QStringLiteral("rescued"), normlab::Config{},
                     QString());
        RunUpdate update;
        update.runId = id;
        update.records.push_back(normlab::StepRecord{});
        update.records.back().step = 1;
        if (id == 1) update.events.push_back({41, "change", "", "model.norm_placement", "\"pre\"", -1});
        update.step = 1;
        forks.absorb(TelemetryBatch{{update}});
    }
    QCOMPARE(captionForRuns(forks).section('\n', 0, 0),
             QStringLiteral("Differs: rescued switched to Pre-LN at step 41"));
}

void ExportTest::vectorFiguresHaveThePhysicalSize() {
    ChartPanel& panel = *m_dashboard->panel(QStringLiteral("loss"));
    ImageExportOptions options;
    options.size = QSize(1600, 1000);
    options.dpi = 200;  // 8 x 5 inches = 203.2 x 127 mm = 576 x 360 pt
    const QString svgPath = m_dir.filePath(QStringLiteral("size.svg"));
    const QString pdfPath = m_dir.filePath(QStringLiteral("size.pdf"));
    QCOMPARE(exportPanel(panel, svgPath, options), QString());
    QCOMPARE(exportPanel(panel, pdfPath, options), QString());
    const QByteArray svg = readAll(svgPath);
    QVERIFY2(svg.contains("width=\"203.2mm\"") && svg.contains("height=\"127mm\""),
             svg.left(400).constData());
    QVERIFY2(svg.contains("fill=\"#ffffff\""), "no opaque background");
    QProcess info;
    info.start(QStringLiteral("pdfinfo"), {pdfPath});
    QVERIFY(info.waitForFinished(30000));
    const QString pdfInfo = QString::fromUtf8(info.readAllStandardOutput());
    QVERIFY2(pdfInfo.contains(QStringLiteral("576 x 360 pts")), qPrintable(pdfInfo));
}

void ExportTest::knownCaptionRendersEveryLine() {
    // A figure of a caption alone: every line must be drawn, none clipped.
    Figure figure;
    figure.caption = QStringLiteral("first run: Post-LN\nsecond run: Pre-LN\nthird run: Peri-LN");
    const QString path = m_dir.filePath(QStringLiteral("caption.png"));
    ImageExportOptions options;
    options.size = QSize(900, 400);
    QCOMPARE(exportFigure(figure, path, options), QString());
    QCOMPARE(darkRowRuns(QImage(path)), 3);
    // At presentation size too, with a transparent background.
    options.fontPoints = ImageExportOptions::kPresentationPoints;
    options.transparent = true;
    QCOMPARE(exportFigure(figure, path, options), QString());
    const QImage large(path);
    QCOMPARE(qAlpha(large.pixel(0, 0)), 0);
    QImage flattened(large.size(), QImage::Format_ARGB32);
    flattened.fill(Qt::white);
    QPainter(&flattened).drawImage(0, 0, large);
    QCOMPARE(darkRowRuns(flattened), 3);
    // Left out by choice: nothing drawn.
    options.caption = false;
    options.transparent = false;
    QCOMPARE(exportFigure(figure, path, options), QString());
    QCOMPARE(darkRowRuns(QImage(path)), 0);
    // A caption that cannot fit is refused with what to change.
    figure.caption = QString(QStringLiteral("line\n")).repeated(60);
    options.caption = true;
    QVERIFY(exportFigure(figure, path, options).contains(QStringLiteral("make the figure taller")));
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

    // A block chart of several runs names the step each run's solid line shows, and the dashed one's.
    const QString blocks = m_dashboard->panel(QStringLiteral("block_gradient"))->csv();
    QVERIFY2(blocks.contains(QStringLiteral("\nprerun (step 300),y,0,")), qPrintable(blocks));
    QVERIFY2(blocks.contains(QStringLiteral("\nprerun step 1,y,0,")), qPrintable(blocks));
}

void ExportTest::pngHonoursSizeAndDpi() {
    ChartPanel& panel = *m_dashboard->panel(QStringLiteral("block_gradient"));
    ImageExportOptions options;
    options.size = QSize(2400, 1500);
    options.dpi = 300;
    const QString path = m_dir.filePath(QStringLiteral("big.png"));
    QCOMPARE(exportPanel(panel, path, options), QString());
    const QImage image(path);
    QCOMPARE(image.size(), QSize(2400, 1500));
    QCOMPARE(std::lround(image.dotsPerMeterX() * 0.0254), 300L);
}

void ExportTest::dashboardFigureHasChartsOnly() {
    const Figure figure = m_dashboard->figure(captionForRuns(m_store));
    QCOMPARE(figure.rows.size(), size_t(3));
    const QString svgPath = m_dir.filePath(QStringLiteral("dash.svg"));
    ImageExportOptions options;
    options.size = QSize(2800, 1800);
    options.dpi = 192;
    QCOMPARE(exportFigure(figure, m_dir.filePath(QStringLiteral("dash.png")), options), QString());
    QCOMPARE(QImage(m_dir.filePath(QStringLiteral("dash.png"))).size(), QSize(2800, 1800));
    QCOMPARE(exportFigure(figure, svgPath, options), QString());
    QCOMPARE(exportFigure(figure, m_dir.filePath(QStringLiteral("dash.pdf")), options), QString());
    const QString svg = svgText(svgPath);
    // the default arrangement's rows; the panels in a tab behind another are not in the figure
    for (ChartPanel* panel : m_dashboard->panels()) {
        const bool behind = !Dashboard::inDefaultRows(panel->id());
        QVERIFY2(svg.contains(panel->title()) != behind, qPrintable(panel->title()));
    }
    for (const QString& line : captionForRuns(m_store).split('\n', Qt::SkipEmptyParts))
        QVERIFY2(svg.contains(line), qPrintable(line));
    // The panels' selectors ("Show now + step 1 of all matrices", "Run") are widgets, not chart.
    QVERIFY(!svg.contains(QStringLiteral("all matrices")));
    QVERIFY(!svg.contains(QStringLiteral("now + step 1")));
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

void ExportTest::fullDiskLeavesTheOldFile() {
    // A write that runs out of room (here a file size limit of 32 KB, as a full disk would) is an
    // error naming the file, and the file already there is left whole; nothing else is left behind.
    const QString path = m_dir.filePath(QStringLiteral("kept.png"));
    ImageExportOptions options;
    options.size = QSize(1200, 800);
    ChartPanel& loss = *m_dashboard->panel(QStringLiteral("loss"));
    QCOMPARE(exportPanel(loss, path, options), QString());
    const QByteArray before = readAll(path);
    QVERIFY(before.size() > 64 * 1024);
    const QStringList filesBefore = QDir(m_dir.path()).entryList(QDir::Files);
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit previous{};
    QCOMPARE(getrlimit(RLIMIT_FSIZE, &previous), 0);
    rlimit small = previous;
    small.rlim_cur = 32 * 1024;
    QCOMPARE(setrlimit(RLIMIT_FSIZE, &small), 0);
    options.size = QSize(1400, 900);  // a different picture, larger than the limit
    const QString error = exportPanel(loss, path, options);
    Experiment experiment;
    experiment.current = normlab::preset_config("quickstart");
    experiment.dashboardLayout = QByteArray(64 * 1024, 'x');
    const QString saved = saveExperiment(experiment, m_dir.filePath(QStringLiteral("big.json")));
    QCOMPARE(setrlimit(RLIMIT_FSIZE, &previous), 0);
    QVERIFY2(error.contains(path), qPrintable(error));
    QVERIFY2(!saved.isEmpty(), "an experiment file past the limit was reported saved");
    QCOMPARE(readAll(path), before);
    QCOMPARE(QDir(m_dir.path()).entryList(QDir::Files), filesBefore);
}

QTEST_MAIN(ExportTest)
#include "test_export.moc"
