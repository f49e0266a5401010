// Trailing-window z-score of the loss; a spike needs a full window and a non-degenerate spread.
// Non-finite losses are left to the divergence check and never enter the window.
#include "engine/train/loss_spikes.h"

#include <algorithm>
#include <cmath>

namespace normlab {

double LossSpikeDetector::observe(double loss) {
    double z = 0.0;
    if (m_history.full()) {
        const size_t count = m_history.size();
        double mean = 0.0;
        for (size_t i = 0; i < count; ++i) mean += m_history[i];
        mean /= static_cast<double>(count);
        double variance = 0.0;
        for (size_t i = 0; i < count; ++i) variance += (m_history[i] - mean) * (m_history[i] - mean);
        const double spread = std::sqrt(variance / static_cast<double>(count));
        const double score = (loss - mean) / std::max(spread, 1e-6 * std::max(1.0, std::fabs(mean)));
        if (score > m_threshold) z = score;
        m_history.drop_oldest();
    }
    if (std::isfinite(loss)) m_history.push(loss);
    return z;
}

std::vector<double> LossSpikeDetector::recent() const {
    std::vector<double> losses;
    for (size_t i = 0; i < m_history.size(); ++i) losses.push_back(m_history[i]);
    return losses;
}

void LossSpikeDetector::restore(const std::vector<double>& losses) {
    while (!m_history.empty()) m_history.drop_oldest();
    for (const double loss : losses)
        if (std::isfinite(loss)) m_history.push(loss);
}

}  // namespace normlab
