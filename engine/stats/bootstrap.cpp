// The percentile bootstrap: resample with Rng::below, compute, sort, read two quantiles.
#include "engine/stats/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "engine/core/rng.h"

namespace normlab::stats {

namespace {
// The q-quantile of sorted values, linear between order statistics (Hyndman and Fan's type 7, numpy's
// default).
double sorted_quantile(const std::vector<double>& sorted, double q) {
    const double position = q * static_cast<double>(sorted.size() - 1);
    const size_t below = static_cast<size_t>(std::floor(position));
    const size_t above = std::min(below + 1, sorted.size() - 1);
    const double fraction = position - static_cast<double>(below);
    return sorted[below] + fraction * (sorted[above] - sorted[below]);
}
}  // namespace

Interval bootstrap_percentile_ci(std::span<const double> values, const Statistic& statistic, int resamples,
                                 double level, uint64_t seed) {
    if (values.empty()) throw std::invalid_argument("the bootstrap needs at least one value");
    if (resamples < 1) throw std::invalid_argument("the bootstrap needs at least one resample");
    if (!(level > 0.0 && level < 1.0)) throw std::invalid_argument("the bootstrap's level must be in (0, 1)");
    if (values.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
        throw std::invalid_argument("the bootstrap takes at most 2^31 - 1 values");
    Rng rng(seed);
    const int n = static_cast<int>(values.size());
    std::vector<double> resample(values.size());
    std::vector<double> statistics;
    statistics.reserve(static_cast<size_t>(resamples));
    for (int r = 0; r < resamples; ++r) {
        for (double& value : resample) value = values[static_cast<size_t>(rng.below(n))];
        statistics.push_back(statistic(resample));
    }
    std::sort(statistics.begin(), statistics.end());
    return {sorted_quantile(statistics, 0.5 * (1.0 - level)),
            sorted_quantile(statistics, 0.5 * (1.0 + level))};
}

}  // namespace normlab::stats
