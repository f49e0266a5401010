// RunsPanel list: colour swatch, name, status and step; checking an item shows the run on every chart.
#include "ui/controls/runs_panel.h"

#include <QEvent>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

#include "ui/panels/run_captions.h"

namespace normlab::ui {

namespace {
QIcon swatch(const QColor& colour) {
    QPixmap pixmap(14, 14);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setBrush(colour);
    painter.setPen(colour.darker(150));
    painter.drawRoundedRect(QRectF(1, 1, 12, 12), 3, 3);
    return QIcon(pixmap);
}
}  // namespace

RunsPanel::RunsPanel(TelemetryStore& store, QWidget* parent) : QWidget(parent), m_store(store) {
    auto* layout = new QVBoxLayout(this);
    auto* hint =
        new QLabel(tr("Runs of this experiment, stepped in turn. Untick to hide a run on every chart."));
    hint->setWordWrap(true);
    m_list = new QListWidget;
    m_list->setObjectName(QStringLiteral("runList"));
    m_list->setWordWrap(true);
    auto* add = new QPushButton(tr("Add run with current settings"));
    add->setObjectName(QStringLiteral("addRun"));
    add->setToolTip(
        tr("Compare: adds a run with the control panel's settings from step 0; the runs already "
           "training go on as they are"));
    auto* fork = new QPushButton(tr("Fork selected run here"));
    fork->setObjectName(QStringLiteral("forkRun"));
    fork->setToolTip(
        tr("A controlled experiment: a new run that starts from the selected run's state at its "
           "current step and sees the same batches; the controls then change the fork only"));
    layout->addWidget(hint);
    layout->addWidget(m_list, 1);
    layout->addWidget(add);
    layout->addWidget(fork);
    connect(add, &QPushButton::clicked, this, &RunsPanel::addRunRequested);
    connect(fork, &QPushButton::clicked, this, [this] { emit forkRequested(m_selected); });
    m_list->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_list, &QListWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        const QListWidgetItem* item = m_list->itemAt(at);
        if (!item) return;
        const int id = item->data(Qt::UserRole).toInt();
        QMenu menu(this);
        const RunHistory* run = m_store.run(id);
        if (run && run->bands) {
            addGroupActions(menu, *run);
        } else {
            // A run opened or replayed from its folder forks from the checkpoints the folder keeps.
            menu.addAction(run && !run->source.isEmpty()
                               ? tr("Fork into live training from a kept checkpoint...")
                               : tr("Fork here (at its current step)"),
                           this, [this, id] { emit forkRequested(id); });
        }
        menu.exec(m_list->viewport()->mapToGlobal(at));
    });
    connect(&store, &TelemetryStore::runsChanged, this, &RunsPanel::rebuild);
    connect(m_list, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
        m_store.setVisible(item->data(Qt::UserRole).toInt(), item->checkState() == Qt::Checked);
    });
    connect(m_list, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* item) {
        if (item) emit runSelected(item->data(Qt::UserRole).toInt());
    });
    rebuild();
}

void RunsPanel::addGroupActions(QMenu& menu, const RunHistory& group) {
    const int id = group.id;
    QAction* seeds = menu.addAction(tr("Show each seed's line"));
    seeds->setObjectName(QStringLiteral("showSeeds"));
    seeds->setCheckable(true);
    seeds->setChecked(group.bands->seedsShown);
    connect(seeds, &QAction::toggled, this, [this, id](bool shown) { m_store.setSeedsShown(id, shown); });
    QMenu* band = menu.addMenu(tr("Band around the mean (every group)"));
    for (const Spread spread : {Spread::Ci95, Spread::Sd}) {
        QAction* choice = band->addAction(spread == Spread::Ci95 ? tr("95% confidence interval of the mean")
                                                                 : tr("one standard deviation of the seeds"));
        choice->setCheckable(true);
        choice->setChecked(m_store.spread() == spread);
        connect(choice, &QAction::triggered, this, [this, spread] { m_store.setSpread(spread); });
    }
}

void RunsPanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    // A new font (presentation mode) changes every item's size: lay the list out again so it wraps.
    if (event->type() == QEvent::FontChange) m_list->doItemsLayout();
}

void RunsPanel::setSelectedRun(int id) {
    m_selected = id;
    QSignalBlocker blocker(m_list);
    for (int row = 0; row < m_list->count(); ++row)
        if (m_list->item(row)->data(Qt::UserRole).toInt() == id) m_list->setCurrentRow(row);
}

void RunsPanel::rebuild() {
    QSignalBlocker blocker(m_list);
    // The selected run stays selected (a live change renames it "... (changed)" and rebuilds the list).
    if (m_list->currentItem()) m_selected = m_list->currentItem()->data(Qt::UserRole).toInt();
    // What differs depends only on the runs' configs and visibility, which change only here (not on
    // every ~30 Hz status update).
    m_differences = differencesByRun(m_store);
    m_list->clear();
    for (const auto& [id, run] : m_store.runs()) {
        // A group's seeds are listed under it while their lines are shown; its entry stands for them.
        const RunHistory* group = run.groupId >= 0 ? m_store.run(run.groupId) : nullptr;
        if (group && group->bands && !group->bands->seedsShown) continue;
        auto* item = new QListWidgetItem(swatch(run.colour), run.name);
        if (group) item->setData(Qt::UserRole + 1, 1);  // indented by updateStatus
        item->setData(Qt::UserRole, id);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(run.visible ? Qt::Checked : Qt::Unchecked);
        // An opened folder whose config NormLab could not (fully) read says so instead of showing defaults.
        QString about = runSummary(run);
        if (!run.note.isEmpty()) about += QStringLiteral("\n") + run.note;
        item->setToolTip(about + QStringLiteral("\n") + run.folder);
        m_list->addItem(item);
        if (id == m_selected) m_list->setCurrentItem(item);
    }
    updateStatus();
}

void RunsPanel::updateStatus() {
    QSignalBlocker blocker(m_list);
    for (int row = 0; row < m_list->count(); ++row) {
        QListWidgetItem* item = m_list->item(row);
        const auto found = m_store.runs().find(item->data(Qt::UserRole).toInt());
        if (found == m_store.runs().end()) continue;
        const RunHistory& run = found->second;
        const QString loss =
            run.loss.lastValue() ? QString::number(*run.loss.lastValue(), 'f', 3) : QStringLiteral("-");
        const QString indent = item->data(Qt::UserRole + 1).toInt() ? QStringLiteral("    ") : QString();
        QString text = QStringLiteral("%1%2\n%1%3, step %4, loss %5")
                           .arg(indent, run.name, run.statusText())
                           .arg(run.step)
                           .arg(loss);
        // The states it keeps for forks at an earlier step, and what they cost.
        if (!run.forkPoints.empty())
            text += QStringLiteral("\n%1fork points: steps %2-%3 (%4 kept, %5 MB)")
                        .arg(indent)
                        .arg(run.forkPoints.front())
                        .arg(run.forkPoints.back())
                        .arg(run.forkPoints.size())
                        .arg(static_cast<double>(run.forkPointBytes) / (1 << 20), 0, 'f', 1);
        // What it trained as, not only how it started: "switched to Pre-LN at step 101".
        if (const QString changes = liveChangesText(run); !changes.isEmpty())
            text += QLatin1Char('\n') + changes;
        // Only what differs from the other runs shown: what a reader comparing them wants to know.
        // Short keys here (the list is narrow; captions keep the full key): "norm_placement=post".
        if (const auto found = m_differences.find(run.id); found != m_differences.end())
            text +=
                QLatin1Char('\n') +
                QString(found->second).replace(QRegularExpression(QStringLiteral("\\b[a-z]+\\.")), QString());
        item->setText(text);
    }
}

}  // namespace normlab::ui
