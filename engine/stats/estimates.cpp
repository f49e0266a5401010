// The estimates of estimates.h: sums in the order given (deterministic), the sample variance by the
// two-pass formula (no cancellation for values far from zero such as losses near 3.4).
#include "engine/stats/estimates.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "engine/stats/student_t.h"

namespace normlab::stats {

namespace {
double mean_of(std::span<const double> values) {
    double sum = 0.0;
    for (double value : values) sum += value;
    return sum / static_cast<double>(values.size());
}

// The sample variance (n - 1), n >= 2.
double variance_of(std::span<const double> values, double mean) {
    double sum = 0.0;
    for (double value : values) sum += (value - mean) * (value - mean);
    return sum / static_cast<double>(values.size() - 1);
}

void set_interval(Estimate& estimate, double se, double dof, double level) {
    estimate.se = se;
    estimate.dof = dof;
    estimate.t = student_t_quantile(0.5 * (1.0 + level), dof);
    estimate.ci = Interval{estimate.mean - *estimate.t * se, estimate.mean + *estimate.t * se};
}
}  // namespace

Estimate estimate_mean(std::span<const double> values, double level) {
    Estimate estimate;
    estimate.n = values.size();
    if (values.empty()) {
        estimate.mean = std::numeric_limits<double>::quiet_NaN();
        return estimate;
    }
    estimate.mean = mean_of(values);
    if (values.size() < 2) return estimate;
    estimate.sd = std::sqrt(variance_of(values, estimate.mean));
    const double n = static_cast<double>(values.size());
    set_interval(estimate, *estimate.sd / std::sqrt(n), n - 1.0, level);
    return estimate;
}

Estimate paired_difference(std::span<const double> a, std::span<const double> b, double level) {
    if (a.size() != b.size()) throw std::invalid_argument("paired_difference needs as many B values as A");
    std::vector<double> differences(a.size());
    for (size_t i = 0; i < a.size(); ++i) differences[i] = b[i] - a[i];
    return estimate_mean(differences, level);
}

Estimate welch_difference(std::span<const double> a, std::span<const double> b, double level) {
    Estimate estimate;
    estimate.n = a.size() + b.size();
    if (a.empty() || b.empty()) {
        estimate.mean = std::numeric_limits<double>::quiet_NaN();
        return estimate;
    }
    const double mean_a = mean_of(a), mean_b = mean_of(b);
    estimate.mean = mean_b - mean_a;
    if (a.size() < 2 || b.size() < 2) return estimate;
    const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
    const double va = variance_of(a, mean_a) / na, vb = variance_of(b, mean_b) / nb;
    const double se = std::sqrt(va + vb);
    const double dof =
        va + vb > 0.0 ? (va + vb) * (va + vb) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0)) : na + nb - 2.0;
    set_interval(estimate, se, dof, level);
    return estimate;
}

}  // namespace normlab::stats
