// Means and differences of means with Student t confidence intervals: one group's mean, the paired
// difference B - A of runs matched by seed, and Welch's unpaired difference. Plain numbers in, plain
// numbers out; the caller leaves out what is not finite (a diverged run) before calling.
#pragma once
#include <cstddef>
#include <optional>
#include <span>

namespace normlab::stats {

struct Interval {
    double low = 0.0, high = 0.0;
};

// A mean (or a difference of means) and what can honestly be said about it: with fewer than two
// values there is no sd, no degrees of freedom and no interval (never a made-up one).
struct Estimate {
    size_t n = 0;                // values; pairs for a paired difference; n_a + n_b for Welch
    double mean = 0.0;           // NaN when n == 0
    std::optional<double> sd;    // the sample sd (n - 1 in the denominator); of the pairs' differences
    std::optional<double> se;    // the standard error of `mean`
    std::optional<double> dof;   // the t's degrees of freedom (Welch-Satterthwaite's for Welch)
    std::optional<double> t;     // the two-sided t quantile used, t_{(1 + level) / 2, dof}
    std::optional<Interval> ci;  // mean -+ t se
};

// The mean of `values`, its sample sd and the two-sided `level` t interval with n - 1 dof (n >= 2).
Estimate estimate_mean(std::span<const double> values, double level = 0.95);

// B - A from pairs (a[i], b[i]) (the same seed): the mean of the differences with its t interval, n - 1
// dof over the pairs. Throws std::invalid_argument when the spans differ in length.
Estimate paired_difference(std::span<const double> a, std::span<const double> b, double level = 0.95);

// mean(B) - mean(A) for independent groups, with Welch's standard error sqrt(s_a^2/n_a + s_b^2/n_b)
// and Welch-Satterthwaite's degrees of freedom (needs n_a, n_b >= 2). When both groups have sd 0 the
// interval is the point itself and dof is n_a + n_b - 2.
Estimate welch_difference(std::span<const double> a, std::span<const double> b, double level = 0.95);

}  // namespace normlab::stats
