// RefreshPacer: the GUI thread's CPU share over the last redraw cycle steers the next interval.
#include "ui/panels/refresh_pacer.h"

#include <algorithm>
#include <ctime>

namespace normlab::ui {

RefreshPacer::RefreshPacer(double share, int fastestMs, int slowestMs)
    : m_share(share), m_fastestMs(fastestMs), m_slowestMs(slowestMs), m_intervalMs(fastestMs) {}

double RefreshPacer::threadCpuSeconds() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

int RefreshPacer::nextIntervalMs() {
    const double cpu = threadCpuSeconds();
    if (m_lastCpu >= 0.0) {
        // A cycle costs a redraw R plus intake at a rate a per second: usage = R / T + a. Scaling T
        // by usage / share settles where usage = share (T = R / (share - a)); halfway steps smooth it.
        const double wall = std::max(m_wall.nsecsElapsed() * 1e-9, 1e-3);
        const double usage = (cpu - m_lastCpu) / wall;
        const double target = m_intervalMs * usage / m_share;
        m_intervalMs = std::clamp(static_cast<int>(0.5 * (m_intervalMs + target)), m_fastestMs, m_slowestMs);
    }
    m_lastCpu = cpu;
    m_wall.start();
    return m_intervalMs;
}

}  // namespace normlab::ui
