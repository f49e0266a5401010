// The dashboard's stage: presentation's layout of one or two big charts side by side, chosen by id and
// cycled through the other charts with a key, their fonts scaled with their size (ChartStyle).
#include <QDockWidget>

#include "ui/dashboard.h"

namespace normlab::ui {

QStringList Dashboard::defaultStage() {
    return {QStringLiteral("loss"), QStringLiteral("block_gradient")};
}

QString Dashboard::stageProblem(const QStringList& ids) const {
    if (ids.isEmpty() || ids.size() > 2)
        return tr("the stage shows one or two charts, not %1").arg(ids.size());
    for (const QString& id : ids)
        if (!panel(id)) return tr("no chart '%1' (normlab --list-charts lists them)").arg(id);
    if (ids.size() == 2 && ids[0] == ids[1]) return tr("the stage's two charts are both '%1'").arg(ids[0]);
    return {};
}

QString Dashboard::setStage(const QStringList& ids) {
    if (!m_layoutBeforeMaximise.isEmpty()) toggleMaximised(nullptr);  // from the maximised chart first
    if (ids.isEmpty()) {
        if (m_stage.isEmpty()) return {};
        m_stage.clear();
        for (ChartPanel* panel : m_panels) panel->setScalesWithSize(false);
        restoreState(m_layoutBeforeStage);
        m_layoutBeforeStage.clear();
        titleDocks();
        return {};
    }
    if (const QString problem = stageProblem(ids); !problem.isEmpty()) return problem;
    if (m_stage.isEmpty()) m_layoutBeforeStage = saveState();
    m_stage = ids;
    placeStage();
    return {};
}

void Dashboard::placeStage() {
    for (QDockWidget* dock : m_docks) {
        removeDockWidget(dock);
        dock->setFloating(false);
    }
    QDockWidget* first = dock(m_stage.front());
    addDockWidget(Qt::TopDockWidgetArea, first);
    first->show();
    if (m_stage.size() == 2) {
        QDockWidget* second = dock(m_stage.back());
        splitDockWidget(first, second, Qt::Horizontal);
        second->show();
        resizeDocks({first, second}, {1, 1}, Qt::Horizontal);  // equal halves
    }
    for (ChartPanel* panel : m_panels) panel->setScalesWithSize(m_stage.contains(panel->id()));
    titleDocks();
    for (const QString& id : m_stage) dock(id)->setWindowTitle(panel(id)->title());  // alone: its whole title
    refreshNow();
}

void Dashboard::cycleStage(int direction) {
    if (m_stage.isEmpty()) return;
    const int count = static_cast<int>(m_panels.size());
    int at = 0;
    while (m_panels[at]->id() != m_stage.back()) ++at;
    for (int k = 1; k < count; ++k) {
        const QString next = m_panels[((at + direction * k) % count + count) % count]->id();
        if (m_stage.contains(next)) continue;
        m_stage.back() = next;
        placeStage();
        return;
    }
}

}  // namespace normlab::ui
