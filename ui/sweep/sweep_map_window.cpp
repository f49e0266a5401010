// SweepMapWindow: controls that rebuild the map from the last read, a timer that re-reads the folder
// on a detached thread (results cross back to the GUI thread only while the window exists), and the
// export of both charts through the figure machinery every chart uses (makeExportButton).
#include "ui/sweep/sweep_map_window.h"

#include <QApplication>
#include <QComboBox>
#include <QFileInfo>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QTime>
#include <QTimer>
#include <QVBoxLayout>
#include <cmath>
#include <thread>

#include "engine/config/architecture_family.h"
#include "engine/config/config_source.h"
#include "engine/sweep/sweep_folder.h"
#include "ui/export/panel_export.h"
#include "ui/history/telemetry_store.h"
#include "ui/plots/line_plot.h"
#include "ui/sweep/sweep_map_view.h"

namespace normlab::ui {

namespace {
constexpr int kRereadMs = 1000;

QString axisName(const normlab::SweepAxis& axis) {
    return QString::fromStdString(axis.name());
}
}  // namespace

SweepMapWindow::SweepMapWindow(const QString& sweepDir, QWidget* parent)
    : QWidget(parent, Qt::Window), m_dir(sweepDir), m_plan(normlab::load_sweep(sweepDir.toStdString())) {
    setWindowTitle(tr("Stability map: %1").arg(sweepDir));
    auto* layout = new QVBoxLayout(this);
    auto* header = new QHBoxLayout;
    layout->addLayout(header);
    buildControls(header);
    m_map = new SweepMapView;
    layout->addWidget(m_map, 3);
    connect(m_map, &SweepMapView::cellActivated, this, &SweepMapWindow::openRunsRequested);
    if (hasSensitivity()) {
        m_sensitivity = new LinePlot(tr("Final loss against learning rate"));
        m_sensitivity->setTitleShown(true);
        layout->addWidget(m_sensitivity, 2);
    }
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("sweepStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);  // a command to copy
    layout->addWidget(m_status);
    m_timer = new QTimer(this);
    m_timer->setInterval(kRereadMs);
    connect(m_timer, &QTimer::timeout, this, &SweepMapWindow::readInBackground);
    m_timer->start();
    resize(1200, 860);
    readInBackground();
}

SweepMapWindow::~SweepMapWindow() {
    m_alive->store(false);
}

void SweepMapWindow::buildControls(QHBoxLayout* header) {
    const MapChoice initial = defaultMapChoice(m_plan);
    const auto axisCombo = [this](bool withNone) {
        auto* combo = new QComboBox;
        if (withNone) combo->addItem(tr("(none)"), -1);
        for (size_t a = 0; a < m_plan.spec.axes.size(); ++a)
            combo->addItem(axisName(m_plan.spec.axes[a]), int(a));
        return combo;
    };
    m_x = axisCombo(false), m_y = axisCombo(true), m_facet = axisCombo(true);
    m_x->setCurrentIndex(m_x->findData(initial.xAxis));
    m_y->setCurrentIndex(m_y->findData(initial.yAxis));
    m_facet->setCurrentIndex(m_facet->findData(initial.facetAxis));
    m_value = new QComboBox;
    m_value->addItem(tr("final validation loss (else training)"), true);
    m_value->addItem(tr("final training loss"), false);
    header->addWidget(new QLabel(tr("x")));
    header->addWidget(m_x);
    header->addWidget(new QLabel(tr("y")));
    header->addWidget(m_y);
    header->addWidget(new QLabel(tr("facets")));
    header->addWidget(m_facet);
    for (const normlab::SweepAxis& axis : m_plan.spec.axes) {
        auto* fixed = new QComboBox;
        fixed->setToolTip(tr("%1, held at this value (the axis is not on the map)").arg(axisName(axis)));
        for (size_t i = 0; i < axis.size(); ++i)
            fixed->addItem(axisName(axis) + QStringLiteral(" = ") +
                           QString::fromStdString(axis.labels.empty()
                                                      ? normlab::override_text(axis.values[0][i])
                                                      : axis.labels[i]));
        header->addWidget(fixed);
        m_fixed.push_back(fixed);
        connect(fixed, &QComboBox::currentIndexChanged, this, &SweepMapWindow::redraw);
    }
    header->addWidget(m_value);
    m_scale = new QComboBox;
    m_scale->setToolTip(
        tr("Colour scale: from the best cell to the initial loss, or to a few per cent "
           "above the best cell so that small differences show"));
    for (const double span : kRelativeSpans)
        m_scale->addItem(
            span > 0 ? tr("colours: best to +%1%").arg(100 * span) : tr("colours: best to initial"), span);
    header->addWidget(m_scale);
    header->addStretch();
    auto* exportButton = makeExportButton(
        this, QFileInfo(m_dir).fileName(), [this] { return figure(); }, [this] { return csv(); });
    header->addWidget(exportButton);
    for (QComboBox* combo : {m_x, m_y, m_facet, m_value, m_scale})
        connect(combo, &QComboBox::currentIndexChanged, this, &SweepMapWindow::redraw);
    // Long axis names ("model.norm_placement+model.residual") must not widen the window: the boxes
    // keep a modest width and show the whole name in their lists.
    for (QComboBox* combo : findChildren<QComboBox*>()) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(16);
    }
}

MapChoice SweepMapWindow::choice() const {
    MapChoice chosen;
    chosen.xAxis = m_x->currentData().toInt();
    chosen.yAxis = m_y->currentData().toInt();
    chosen.facetAxis = m_facet->currentData().toInt();
    if (chosen.yAxis == chosen.xAxis) chosen.yAxis = -1;
    if (chosen.facetAxis == chosen.xAxis || chosen.facetAxis == chosen.yAxis) chosen.facetAxis = -1;
    for (QComboBox* fixed : m_fixed) chosen.fixed.push_back(std::max(0, fixed->currentIndex()));
    chosen.validation = m_value->currentData().toBool();
    chosen.relativeSpan = m_scale->currentData().toDouble();
    return chosen;
}

void SweepMapWindow::setRelativeSpan(double span) {
    m_scale->setCurrentIndex(std::max(0, m_scale->findData(span)));
}

bool SweepMapWindow::hasSensitivity() const {
    return normlab::learning_rate_axis(m_plan) >= 0;
}

void SweepMapWindow::readInBackground() {
    if (m_reading->exchange(true)) return;  // the last read is still going
    QPointer<SweepMapWindow> window(this);
    std::thread([window, dir = m_dir.toStdString(), plan = m_plan, reading = m_reading, alive = m_alive] {
        std::vector<normlab::CollectedPoint> points = normlab::collect_sweep(dir, plan);
        reading->store(false);
        if (!alive->load()) return;
        QMetaObject::invokeMethod(qApp, [window, points = std::move(points)]() mutable {
            if (window) window->showPoints(std::move(points));
        });
    }).detach();
}

void SweepMapWindow::refreshNow() {
    showPoints(normlab::collect_sweep(m_dir.toStdString(), m_plan));
}

void SweepMapWindow::showPoints(std::vector<normlab::CollectedPoint> points) {
    m_points = std::move(points);
    redraw();
    const auto [finished, total] = progress();
    int running = 0;
    for (const normlab::CollectedPoint& point : m_points)
        running += point.progress.state == normlab::PointState::Running;
    QString status = tr("%1 of %2 points finished, %3 running; read at %4")
                         .arg(finished)
                         .arg(total)
                         .arg(running)
                         .arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")));
    if (m_plan.spec.command)  // the user's own script: say what each point ran
        status = tr("Each point runs: %1\n%2").arg(QString::fromStdString(*m_plan.spec.command), status);
    m_status->setText(status);
    if (finished == total) m_timer->setInterval(5 * kRereadMs);  // a finished sweep changes rarely
    emit refreshed();
}

std::pair<int, int> SweepMapWindow::progress() const {
    int finished = 0;
    for (const normlab::CollectedPoint& point : m_points)
        finished += normlab::is_finished(point.progress.state);
    return {finished, static_cast<int>(m_plan.points.size())};
}

void SweepMapWindow::redraw() {
    const MapChoice chosen = choice();
    for (size_t a = 0; a < m_fixed.size(); ++a)
        m_fixed[a]->setVisible(int(a) != chosen.xAxis && int(a) != chosen.yAxis &&
                               int(a) != chosen.facetAxis);
    SweepMapContent content = buildSweepMap(m_plan, m_points, chosen, m_dir);
    content.title = tr("Stability map: %1").arg(QFileInfo(m_dir).fileName());
    m_map->setContent(std::move(content));
    if (m_sensitivity) m_sensitivity->setContent(sensitivityContent());
}

PlotContent SweepMapWindow::sensitivityContent() const {
    PlotContent content;
    content.x = AxisSpec{QStringLiteral("learning rate"), true, std::nullopt, std::nullopt, QString()};
    content.y =
        AxisSpec{QStringLiteral("final loss (clamped)"), false, std::nullopt, std::nullopt, QString()};
    content.emptyText = tr("Appears as points finish");
    const std::vector<normlab::SensitivityRow> rows = normlab::lr_sensitivity(m_plan, m_points);
    // The axes a group is named by: all but the learning rate's, in order. Plain values get their key's
    // last part ("warmup_steps=150"); labelled ones ("Post-LN") stand alone.
    std::vector<const normlab::SweepAxis*> others;
    const int lr = normlab::learning_rate_axis(m_plan);
    for (size_t a = 0; a < m_plan.spec.axes.size(); ++a)
        if (static_cast<int>(a) != lr) others.push_back(&m_plan.spec.axes[a]);
    int index = 0;
    for (const normlab::SensitivityRow& row : rows) {
        PlotSeries series;
        QStringList group;
        for (size_t a = 0; a < row.group.size() && a < others.size(); ++a) {
            const QString label = QString::fromStdString(row.group[a]);
            const QString key = QString::fromStdString(others[a]->keys.front()).section(QLatin1Char('.'), -1);
            group << (others[a]->labels.empty() ? key + QLatin1Char('=') + label : label);
        }
        QString sensitivity = tr(": sensitivity when its points finish");
        if (row.sensitivity && row.sensitivity_ci)
            sensitivity = tr(": sensitivity %1 (95% CI %2 to %3)")
                              .arg(*row.sensitivity, 0, 'f', 3)
                              .arg(row.sensitivity_ci->low, 0, 'f', 3)
                              .arg(row.sensitivity_ci->high, 0, 'f', 3);
        else if (row.sensitivity)
            sensitivity = tr(": sensitivity %1").arg(*row.sensitivity, 0, 'f', 3);
        series.name = (group.isEmpty() ? tr("all") : group.join(QStringLiteral(", "))) + sensitivity;
        series.colour = TelemetryStore::paletteColour(index++);
        series.pointsVisible = true;
        // With seeds, each mean's 95% interval as a band in the curve's colour.
        PlotBand band{tr("95% CI over seeds"), {}, {}, series.colour};
        for (size_t i = 0; i < row.lrs.size(); ++i) {
            if (std::isfinite(row.clamped[i])) series.points.append({row.lrs[i], row.clamped[i]});
            if (std::isfinite(row.ci_low[i]))
                band.lower.append({row.lrs[i], row.ci_low[i]}),
                    band.upper.append({row.lrs[i], row.ci_high[i]});
        }
        content.series.push_back(series);
        if (band.lower.size() >= 2) content.bands.push_back(band);
    }
    return content;
}

QString SweepMapWindow::caption() const {
    QStringList parts;
    if (m_plan.spec.command)  // the user's own script: what it ran is the command
        parts << tr("Sweep %1: %2 points of the command %3")
                     .arg(QFileInfo(m_dir).fileName())
                     .arg(m_plan.points.size())
                     .arg(QString::fromStdString(*m_plan.spec.command));
    else
        parts << tr("Sweep %1: %2 points, base %3, %4 steps; model: %5")
                     .arg(QFileInfo(m_dir).fileName())
                     .arg(m_plan.points.size())
                     .arg(QString::fromStdString(m_plan.spec.preset.value_or(
                         m_plan.spec.config_path.value_or(normlab::kDefaultPreset))))
                     .arg(m_plan.base.train.steps)
                     .arg(QString::fromStdString(normlab::architecture_family(m_plan.base.model)));
    parts << tr(
        "Cells: mean over seeds of min(final loss, initial loss); a cross marks a diverged run (its value "
        "is the initial loss); grey: not run yet. Sensitivity: mean over lr minus the best (Wortsman et al. "
        "2023).");
    if (const double span = m_scale->currentData().toDouble(); span > 0)
        parts << tr("Colours run from the best cell to %1% above it; cells beyond are drawn at the top.")
                     .arg(100 * span);
    return parts.join(QLatin1Char('\n'));
}

Figure SweepMapWindow::figure() const {
    Figure out;
    out.title = tr("Stability map: %1").arg(QFileInfo(m_dir).fileName());
    out.caption = caption();
    const SweepMapContent mapContent = m_map->content();
    out.rows.push_back({[mapContent](const ChartStyle& style) {
        auto view = std::make_unique<SweepMapView>();
        view->setStyle(style);
        view->setTitleShown(true);
        view->setContent(mapContent);
        return std::unique_ptr<QWidget>(std::move(view));
    }});
    if (m_sensitivity)
        out.rows.push_back(
            {linePlotFigure(QObject::tr("Final loss against learning rate"), sensitivityContent())});
    return out;
}

QString SweepMapWindow::csv() const {
    return sweepMapCsv(m_map->content(), caption());
}

}  // namespace normlab::ui
