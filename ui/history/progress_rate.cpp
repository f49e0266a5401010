// Wall-clock progress rates per run (see progress_rate.h).
#include "ui/history/progress_rate.h"

#include <QStringList>
#include <algorithm>
#include <vector>

namespace normlab::ui {

void ProgressRate::sample(int id, int64_t step, double seconds) {
    auto& samples = m_samples[id];
    if (!samples.empty() && step < samples.back().second) samples.clear();  // restarted
    samples.emplace_back(seconds, step);
    while (samples.size() > 2 && seconds - samples[1].first >= kWindowSeconds) samples.pop_front();
}

double ProgressRate::stepsPerSecond(int id) const {
    const auto found = m_samples.find(id);
    if (found == m_samples.end() || found->second.size() < 2) return 0.0;
    const auto& [t0, s0] = found->second.front();
    const auto& [t1, s1] = found->second.back();
    return t1 > t0 ? static_cast<double>(s1 - s0) / (t1 - t0) : 0.0;
}

QString speedText(const std::vector<double>& rates) {
    if (rates.empty()) return QStringLiteral("0.0 steps/s");
    if (rates.size() == 1) return QStringLiteral("%1 steps/s").arg(rates.front(), 0, 'f', 1);
    const auto [low, high] = std::minmax_element(rates.begin(), rates.end());
    if (*high - *low <= 0.1 * *high) {
        double mean = 0.0;
        for (double rate : rates) mean += rate / static_cast<double>(rates.size());
        return QStringLiteral("%1 runs x %2 steps/s").arg(rates.size()).arg(mean, 0, 'f', 1);
    }
    QStringList each;
    for (double rate : rates) each << QString::number(rate, 'f', 1);
    return QStringLiteral("%1 runs: %2 steps/s").arg(rates.size()).arg(each.join(QStringLiteral(", ")));
}

}  // namespace normlab::ui
