// The percentile bootstrap confidence interval of any statistic of one sample: resamples drawn with
// replacement by NormLab's own seeded generator (engine/core/rng.h), so the same seed gives the same
// interval on every machine.
#pragma once
#include <cstdint>
#include <functional>
#include <span>

#include "engine/stats/estimates.h"

namespace normlab::stats {

using Statistic = std::function<double(std::span<const double>)>;

// The (1 - level) / 2 and (1 + level) / 2 quantiles (linear between order statistics) of `statistic`
// over `resamples` resamples of `values`, each as long as `values`. Throws std::invalid_argument for
// no values, resamples < 1 or level outside (0, 1).
Interval bootstrap_percentile_ci(std::span<const double> values, const Statistic& statistic, int resamples,
                                 double level, uint64_t seed);

}  // namespace normlab::stats
