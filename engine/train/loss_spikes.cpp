// Trailing-window z-score of the loss; a spike needs a full window and a non-degenerate spread.
// Non-finite losses are left to the divergence check and never enter the window.
#include "engine/train/loss_spikes.h"

#include <cmath>

namespace normlab {

double LossSpikeDetector::observe(double loss) {
    double z = 0.0;
    if (m_history.size() >= m_window) {
        double mean = 0.0;
        for (double value : m_history) mean += value;
        mean /= static_cast<double>(m_history.size());
        double variance = 0.0;
        for (double value : m_history) variance += (value - mean) * (value - mean);
        const double spread = std::sqrt(variance / static_cast<double>(m_history.size()));
        const double score = (loss - mean) / std::max(spread, 1e-6 * std::max(1.0, std::fabs(mean)));
        if (score > m_threshold) z = score;
        m_history.pop_front();
    }
    if (std::isfinite(loss)) m_history.push_back(loss);
    return z;
}

}  // namespace normlab
