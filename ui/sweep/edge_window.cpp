// EdgeWindow: a header (what was searched, Export), the chart, and a timer that stops once the search
// has finished.
#include "ui/sweep/edge_window.h"

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include "engine/core/errors.h"
#include "engine/sweep/edge_folder.h"
#include "ui/export/panel_export.h"
#include "ui/export/plot_csv.h"
#include "ui/plots/line_plot.h"
#include "ui/sweep/edge_chart.h"

namespace normlab::ui {

EdgeWindow::EdgeWindow(const QString& dir, QWidget* parent) : QWidget(parent, Qt::Window), m_dir(dir) {
    const std::optional<normlab::EdgeSpec> spec = normlab::load_edge_spec(dir.toStdString());
    if (!spec)
        throw normlab::InputError(dir.toStdString() + " holds no edge.json: it is not an edge search folder");
    m_spec = *spec;
    setWindowTitle(tr("Edge search: %1").arg(QFileInfo(dir).fileName()));
    auto* layout = new QVBoxLayout(this);
    auto* header = new QHBoxLayout;
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("edgeStatus"));
    header->addWidget(m_status, 1);
    auto* exportButton = makeExportButton(
        this, QFileInfo(dir).fileName(), [this] { return figure(); }, [this] { return csv(); });
    header->addWidget(exportButton);
    layout->addLayout(header);
    m_plot = new LinePlot(tr("Final loss against %1").arg(QString::fromStdString(m_spec.key)));
    layout->addWidget(m_plot, 1);
    m_timer = new QTimer(this);
    m_timer->setInterval(2000);
    connect(m_timer, &QTimer::timeout, this, &EdgeWindow::refreshNow);
    resize(1200, 760);
    refreshNow();
}

void EdgeWindow::refreshNow() {
    try {
        m_report = normlab::edge_report(m_spec, normlab::read_edge_searches(m_dir.toStdString(), m_spec));
    } catch (const std::exception& error) {  // a search's folder damaged or gone: said, the chart kept
        m_status->setText(tr("Cannot read %1: %2").arg(m_dir, QString::fromStdString(error.what())));
        return;
    }
    m_plot->setContent(edgeChartContent(m_spec, m_report));
    m_status->setText(caption());
    if (m_report.finished)
        m_timer->stop();
    else if (!m_timer->isActive())
        m_timer->start();
}

QString EdgeWindow::caption() const {
    // a search over the user's own script names what it ran
    const QString command = m_spec.base.command
                                ? tr(" of the command %1").arg(QString::fromStdString(*m_spec.base.command))
                                : QString();
    return tr("Edge of %1%8 in [%2, %3], criterion %4, tolerance %5%, seeds %6; %7")
        .arg(QString::fromStdString(m_spec.key))
        .arg(m_spec.bounds.low)
        .arg(m_spec.bounds.high)
        .arg(QString::fromStdString(normlab::to_string(m_spec.criterion)))
        .arg(100.0 * m_spec.bounds.tolerance)
        .arg(m_spec.seeds.size())
        .arg(m_report.finished ? tr("finished") : tr("still probing"))
        .arg(command);
}

Figure EdgeWindow::figure() const {
    Figure out;
    out.title = tr("Edge search: %1").arg(QFileInfo(m_dir).fileName());
    out.caption = caption();
    out.rows.push_back({linePlotFigure(m_plot->title(), m_plot->content())});
    return out;
}

QString EdgeWindow::csv() const {
    return csvFromPlot(m_plot->title(), m_plot->content(), caption());
}

}  // namespace normlab::ui
