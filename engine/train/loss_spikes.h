// Loss-spike detection: the z-score of each loss against a trailing window of earlier losses.
// The trainer turns a z-score above telemetry.spike_z into a "loss_spike" event.
#pragma once
#include <cstddef>

#include "engine/core/trailing_window.h"

namespace normlab {

class LossSpikeDetector {
  public:
    LossSpikeDetector(int window, double threshold)
        : m_history(static_cast<size_t>(window)), m_threshold(threshold) {}

    // Returns the z-score of `loss` when it exceeds the threshold over a full window, else 0; then
    // adds the loss to the window.
    double observe(double loss);

  private:
    TrailingWindow<double> m_history;  // allocated once: observe() never allocates
    double m_threshold;
};

}  // namespace normlab
