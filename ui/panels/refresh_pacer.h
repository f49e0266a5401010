// Paces the dashboard's redraws by what the whole GUI thread costs, not by drawing alone: after each
// redraw the next one waits long enough that the thread's CPU time (telemetry intake, redraws, status
// bar, ...) stays near a share of one core, within [fastest, slowest] milliseconds.
#pragma once
#include <QElapsedTimer>

namespace normlab::ui {

class RefreshPacer {
  public:
    RefreshPacer(double share, int fastestMs, int slowestMs);

    // Called at the end of each redraw (on the GUI thread): the wait before the next one.
    int nextIntervalMs();
    // The calling thread's CPU time so far, in seconds.
    static double threadCpuSeconds();

  private:
    double m_share;
    int m_fastestMs, m_slowestMs, m_intervalMs;
    double m_lastCpu = -1.0;
    QElapsedTimer m_wall;
};

}  // namespace normlab::ui
