// Loss-spike detection: the z-score of each loss against a trailing window of earlier losses.
// The trainer turns a z-score above telemetry.spike_z into a "loss_spike" event.
#pragma once
#include <cstddef>
#include <vector>

#include "engine/core/trailing_window.h"

namespace normlab {

class LossSpikeDetector {
  public:
    LossSpikeDetector(int window, double threshold)
        : m_history(static_cast<size_t>(window)), m_threshold(threshold) {}

    // Returns the z-score of `loss` when it exceeds the threshold over a full window, else 0; then
    // adds the loss to the window.
    double observe(double loss);
    // The losses in the window, oldest first (a checkpoint keeps them), and the window refilled from
    // such a list, its newest values kept: a resumed or forked run then judges its first steps against
    // the losses before them, as its parent would (a fork once missed a spike at its first step).
    std::vector<double> recent() const;
    void restore(const std::vector<double>& losses);

  private:
    TrailingWindow<double> m_history;  // allocated once: observe() never allocates
    double m_threshold;
};

}  // namespace normlab
