// Helpers for finite-difference gradient checks: random tensors, a weighted-sum objective, central
// differences, and a combined absolute/relative comparison that reports the worst element; and the
// relative comparison of two backends' results (fast vs reference CPU ops, CUDA vs CPU).
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/backend/parity.h"
#include "engine/core/rng.h"

namespace normlab::testing {

inline std::vector<float> random_tensor(size_t count, uint64_t seed, double scale = 1.0) {
    Rng rng(seed);
    std::vector<float> values(count);
    for (float& v : values) v = static_cast<float>(rng.normal() * scale);
    return values;
}

inline double weighted_sum(const std::vector<float>& values, const std::vector<float>& weights) {
    double total = 0.0;
    for (size_t i = 0; i < values.size(); ++i) total += static_cast<double>(values[i]) * weights[i];
    return total;
}

// Central difference of `objective` with respect to values[i] (restored afterwards).
inline double central_difference(std::vector<float>& values, size_t i,
                                 const std::function<double()>& objective, float step) {
    const float saved = values[i];
    values[i] = saved + step;
    const double plus = objective();
    values[i] = saved - step;
    const double minus = objective();
    values[i] = saved;
    return (plus - minus) / (2.0 * static_cast<double>(step));
}

// Checks every element of `analytic` against central differences of `objective` w.r.t. `values`.
inline void expect_gradient_matches(const std::string& what, std::vector<float>& values,
                                    const std::vector<float>& analytic,
                                    const std::function<double()>& objective, float step = 1e-2f,
                                    double tolerance = 2e-3) {
    ASSERT_EQ(values.size(), analytic.size()) << what;
    double worst = 0.0;
    size_t worst_index = 0;
    double worst_numeric = 0.0;
    for (size_t i = 0; i < values.size(); ++i) {
        const double numeric = central_difference(values, i, objective, step);
        const double error = std::fabs(numeric - analytic[i]) / std::max(1.0, std::fabs(numeric));
        if (error > worst) {
            worst = error;
            worst_index = i;
            worst_numeric = numeric;
        }
    }
    EXPECT_LT(worst, tolerance) << what << ": element " << worst_index << " analytic "
                                << analytic[worst_index] << " vs finite difference " << worst_numeric;
}

// Largest |actual - reference| relative to the reference's largest magnitude, at most `tolerance`: the
// engine's parity rule (engine/backend/parity.h), which the GPU self-check applies too.
inline void expect_close(const std::string& what, const std::vector<float>& actual,
                         const std::vector<float>& reference, double tolerance = 2e-5) {
    const ParityCheck check = compare_tensors(what, actual, reference, tolerance);
    EXPECT_TRUE(check.passed()) << check.describe();
}

}  // namespace normlab::testing
