// How fast each run advances in wall-clock time: steps gained over the last few seconds, from the
// store's step counts as they are drawn. Runs trained side by side share the engine thread, so each
// advances at a fraction of its own step time's rate; the status bar says the former.
#pragma once
#include <QString>
#include <cstdint>
#include <deque>
#include <map>
#include <utility>

namespace normlab::ui {

class ProgressRate {
  public:
    static constexpr double kWindowSeconds = 3.0;  // rates are measured over about this span

    // Records that run `id` was at `step` at time `seconds` (any monotonic clock).
    void sample(int id, int64_t step, double seconds);
    void forget(int id) { m_samples.erase(id); }
    void clear() { m_samples.clear(); }
    // Steps a second of run `id` over the window (0 until two samples span some time, or after a
    // restart sets its step back).
    double stepsPerSecond(int id) const;

  private:
    std::map<int, std::deque<std::pair<double, int64_t>>> m_samples;
};

// The status bar's text for the advancing runs' rates: "1.5 steps/s" for one, "3 runs x 1.5 steps/s"
// when they go at one pace (within 10%), else "3 runs: 2.1, 1.5, 0.9 steps/s".
QString speedText(const std::vector<double>& rates);

}  // namespace normlab::ui
