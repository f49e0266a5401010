// The Runs panel: every run of the current experiment with its colour, status and a visibility
// toggle, a button to add a run with the current settings to the comparison, and forks (a button
// and each run's context menu).
#pragma once
#include <QWidget>
#include <map>

#include "ui/history/telemetry_store.h"

class QListWidget;

class QMenu;

namespace normlab::ui {

class RunsPanel : public QWidget {
    Q_OBJECT
  public:
    explicit RunsPanel(TelemetryStore& store, QWidget* parent = nullptr);

  public slots:
    // Status, step and loss of each run (called at the dashboard's redraw pace).
    void updateStatus();

    // Shows `id` as the selected run (the one the controls edit) without announcing it.
    void setSelectedRun(int id);

  signals:
    void addRunRequested();
    // "Fork here" on a run (its context menu, or the button for the selected run; -1: none selected).
    void forkRequested(int runId);
    // The user picked a run: the control panel shows (and live changes go to) that run.
    void runSelected(int runId);

  protected:
    void changeEvent(QEvent* event) override;

  private:
    // A seed group's menu: its seeds' lines shown or not, and which band every group draws.
    void addGroupActions(QMenu& menu, const RunHistory& group);
    int m_selected = -1;
    std::map<int, QString> m_differences;  // per visible run: the config keys that differ (rebuild())
    void rebuild();
    TelemetryStore& m_store;
    QListWidget* m_list = nullptr;
};

}  // namespace normlab::ui
