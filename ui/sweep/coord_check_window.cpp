// CoordCheckWindow: a caption, a quantity box and Export above one LinePlot of coordCheckContent.
#include "ui/sweep/coord_check_window.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>
#include <cmath>

#include "ui/export/panel_export.h"
#include "ui/export/plot_csv.h"
#include "ui/history/telemetry_store.h"
#include "ui/plots/line_plot.h"

namespace normlab::ui {

PlotContent coordCheckContent(const normlab::CoordCheckResult& result, size_t q) {
    const normlab::CoordQuantity& quantity = normlab::kCoordQuantities.at(q);
    PlotContent content;
    // the axis's own range: whole decades, so its labels name widths (10, 100, 1000)
    content.x = AxisSpec{QObject::tr("width (d_model)"), true, std::nullopt, std::nullopt, QString()};
    content.y = AxisSpec{QString::fromUtf8(quantity.name.data(), static_cast<int>(quantity.name.size())),
                         true, std::nullopt, std::nullopt,
                         quantity.per_block ? QObject::tr("mean over blocks") : QString()};
    content.emptyText = QObject::tr("No finite values to draw");
    content.styleKey = QObject::tr("a line per step; step 1 is the initialisation");
    QStringList exponents;
    for (int t = 0; t < result.steps; ++t) {
        PlotSeries series{QObject::tr("step %1").arg(t + 1), TelemetryStore::paletteColour(t), {}, 1.6};
        series.pointsVisible = true;
        for (size_t w = 0; w < result.widths.size(); ++w) {
            const std::vector<double>& blocks = result.values[q][w][static_cast<size_t>(t)];
            double total = 0.0;
            for (double v : blocks) total += v;
            series.points.append(
                {static_cast<double>(result.widths[w]), total / static_cast<double>(blocks.size())});
        }
        content.series.push_back(std::move(series));
        const double exponent = result.exponents[q][static_cast<size_t>(t)];
        exponents << (std::isfinite(exponent) ? QStringLiteral("%1").arg(exponent, 0, 'f', 3)
                                              : QStringLiteral("-"));
    }
    content.note = QObject::tr("growth exponent per step (slope of log size against log width): %1")
                       .arg(exponents.join(QStringLiteral(", ")));
    return content;
}

CoordCheckWindow::CoordCheckWindow(const QString& dir, QWidget* parent)
    : QWidget(parent, Qt::Window), m_dir(dir), m_result(normlab::read_coord_check(dir.toStdString())) {
    setWindowTitle(tr("Coordinate check: %1").arg(QFileInfo(dir).fileName()));
    auto* layout = new QVBoxLayout(this);
    auto* header = new QHBoxLayout;
    auto* status = new QLabel(caption());
    status->setObjectName(QStringLiteral("coordCheckCaption"));
    status->setWordWrap(true);
    header->addWidget(status, 1);
    m_quantity = new QComboBox;
    m_quantity->setObjectName(QStringLiteral("coordCheckQuantity"));
    for (const normlab::CoordQuantity& quantity : normlab::kCoordQuantities) {
        m_quantity->addItem(QString::fromUtf8(quantity.name.data(), static_cast<int>(quantity.name.size())));
        m_quantity->setItemData(
            m_quantity->count() - 1,
            QString::fromUtf8(quantity.meaning.data(), static_cast<int>(quantity.meaning.size())),
            Qt::ToolTipRole);
    }
    header->addWidget(m_quantity);
    header->addWidget(makeExportButton(
        this, QFileInfo(dir).fileName(), [this] { return figure(); }, [this] { return csv(); }));
    layout->addLayout(header);
    m_plot = new LinePlot(tr("Coordinate size against width"));
    m_plot->setTitleShown(true);
    layout->addWidget(m_plot, 1);
    connect(m_quantity, &QComboBox::currentIndexChanged, this, &CoordCheckWindow::showQuantity);
    resize(1100, 720);
    showQuantity(0);
}

void CoordCheckWindow::showQuantity(int q) {
    if (q < 0 || q >= static_cast<int>(normlab::kCoordQuantities.size())) return;
    if (m_quantity->currentIndex() != q) m_quantity->setCurrentIndex(q);  // calls back here
    m_plot->setContent(coordCheckContent(m_result, static_cast<size_t>(q)));
}

QString CoordCheckWindow::caption() const {
    return tr("%1 at widths %2 (base width %3), %4 steps, %5 seed(s), %6 blocks")
        .arg(QString::fromStdString(normlab::to_string(m_result.parametrization)))
        .arg(QString::fromStdString([this] {
            std::string text;
            for (int width : m_result.widths) text += (text.empty() ? "" : ", ") + std::to_string(width);
            return text;
        }()))
        .arg(m_result.base_width)
        .arg(m_result.steps)
        .arg(m_result.seeds)
        .arg(m_result.blocks);
}

Figure CoordCheckWindow::figure() const {
    Figure out;
    out.title = tr("Coordinate check: %1").arg(QFileInfo(m_dir).fileName());
    out.caption = caption();
    out.rows.push_back({linePlotFigure(m_plot->title(), m_plot->content())});
    return out;
}

QString CoordCheckWindow::csv() const {
    return csvFromPlot(m_plot->title(), m_plot->content(), caption());
}

}  // namespace normlab::ui
