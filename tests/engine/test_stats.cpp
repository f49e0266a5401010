// The statistics of engine/stats/: Student t quantiles against the t table, a worked example of a
// mean, a paired and a Welch difference against values computed with mpmath at 30 digits, and the
// bootstrap's determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "engine/stats/bootstrap.h"
#include "engine/stats/estimates.h"
#include "engine/stats/student_t.h"

namespace normlab::stats {
namespace {

TEST(StudentT, QuantilesMatchTheTable) {
    EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062047, 1e-6);
    EXPECT_NEAR(student_t_quantile(0.975, 2), 4.3026527, 1e-6);
    EXPECT_NEAR(student_t_quantile(0.975, 4), 2.7764451, 1e-6);
    EXPECT_NEAR(student_t_quantile(0.975, 9), 2.2621572, 1e-6);
    EXPECT_NEAR(student_t_quantile(0.975, 30), 2.0422725, 1e-6);
    EXPECT_NEAR(student_t_quantile(0.995, 3), 5.84090931, 1e-6);
    EXPECT_NEAR(student_t_quantile(0.95, 10), 1.81246112, 1e-6);
    // Large dof tends to the normal: mpmath gives 1.95996635681 at 1e6; 1.95996398454 at infinity.
    EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.9599663568, 1e-9);
    EXPECT_NEAR(student_t_quantile(0.975, std::numeric_limits<double>::infinity()), 1.959963985, 1e-9);
    EXPECT_NEAR(normal_quantile(0.975), 1.959963985, 1e-9);
    EXPECT_NEAR(student_t_quantile(0.975, 1e9), 1.959963987, 1e-9);  // the Cornish-Fisher branch
}

TEST(StudentT, SymmetricAndExtreme) {
    EXPECT_DOUBLE_EQ(student_t_quantile(0.5, 3), 0.0);
    EXPECT_NEAR(student_t_quantile(0.025, 9), -2.2621572, 1e-6);
    // dof 1 is the Cauchy distribution: its quantile is tan(pi (p - 1/2)).
    const double p = 0.9999999;
    EXPECT_NEAR(student_t_quantile(p, 1) / std::tan(M_PI * (p - 0.5)), 1.0, 1e-6);
    EXPECT_NEAR(student_t_upper_tail(2.2621572, 9), 0.025, 1e-8);
    EXPECT_THROW(student_t_quantile(1.0, 3), std::invalid_argument);
    EXPECT_THROW(student_t_quantile(0.9, 0), std::invalid_argument);
    EXPECT_THROW(student_t_quantile(0.9, std::nan("")), std::invalid_argument);
}

// The worked example, checked with mpmath (30 digits):
//   A = 3.41 3.38 3.45 3.40 3.43: mean 3.414, sd 0.0270185121722, 95% CI [3.38045208615, 3.44754791385]
//   B = 3.30 3.35 3.31 3.36 3.29: mean 3.322, sd 0.0311448230048
//   paired B - A: mean -0.092, sd 0.0535723809439, CI [-0.158518896716, -0.0254811032839] (4 dof)
//   Welch, B' = 3.30 3.35 3.31 3.36 3.50 3.20 against A: -0.0773333333333, dof 5.89040543125,
//   t 2.45799002569, CI [-0.180171489666, 0.0255048229992]
const std::vector<double> kA{3.41, 3.38, 3.45, 3.40, 3.43};
const std::vector<double> kB{3.30, 3.35, 3.31, 3.36, 3.29};

TEST(Estimates, MeanWithStudentInterval) {
    const Estimate a = estimate_mean(kA);
    EXPECT_EQ(a.n, 5u);
    EXPECT_NEAR(a.mean, 3.414, 1e-12);
    EXPECT_NEAR(*a.sd, 0.0270185121722, 1e-11);
    EXPECT_DOUBLE_EQ(*a.dof, 4.0);
    EXPECT_NEAR(*a.t, 2.7764451052, 1e-9);
    EXPECT_NEAR(a.ci->low, 3.38045208615, 1e-10);
    EXPECT_NEAR(a.ci->high, 3.44754791385, 1e-10);
    EXPECT_NEAR(*estimate_mean(kB).sd, 0.0311448230048, 1e-11);
}

TEST(Estimates, OneValueHasNoInterval) {
    const std::vector<double> one{3.5};
    const Estimate e = estimate_mean(one);
    EXPECT_EQ(e.n, 1u);
    EXPECT_DOUBLE_EQ(e.mean, 3.5);
    EXPECT_FALSE(e.sd || e.ci || e.dof);
    EXPECT_TRUE(std::isnan(estimate_mean(std::vector<double>{}).mean));
}

TEST(Estimates, PairedDifference) {
    const Estimate d = paired_difference(kA, kB);
    EXPECT_EQ(d.n, 5u);
    EXPECT_NEAR(d.mean, -0.092, 1e-12);
    EXPECT_NEAR(*d.sd, 0.0535723809439, 1e-11);
    EXPECT_NEAR(d.ci->low, -0.158518896716, 1e-10);
    EXPECT_NEAR(d.ci->high, -0.0254811032839, 1e-10);
    EXPECT_THROW(paired_difference(kA, std::vector<double>{1.0}), std::invalid_argument);
}

TEST(Estimates, WelchDifference) {
    const std::vector<double> b{3.30, 3.35, 3.31, 3.36, 3.50, 3.20};
    const Estimate d = welch_difference(kA, b);
    EXPECT_EQ(d.n, 11u);
    EXPECT_NEAR(d.mean, -0.0773333333333, 1e-11);
    EXPECT_NEAR(*d.dof, 5.89040543125, 1e-9);
    EXPECT_NEAR(*d.t, 2.45799002569, 1e-8);
    EXPECT_NEAR(d.ci->low, -0.180171489666, 1e-9);
    EXPECT_NEAR(d.ci->high, 0.0255048229992, 1e-9);
    EXPECT_FALSE(d.sd);  // Welch has a standard error, no single sd
    // One value in a group: a difference, but no interval.
    const Estimate short_one = welch_difference(kA, std::vector<double>{3.3});
    EXPECT_NEAR(short_one.mean, -0.114, 1e-12);
    EXPECT_FALSE(short_one.ci);
    // Two constant groups: the interval is the point, dof n_a + n_b - 2.
    const Estimate constant = welch_difference(std::vector<double>{1, 1}, std::vector<double>{2, 2, 2});
    EXPECT_DOUBLE_EQ(constant.ci->low, 1.0);
    EXPECT_DOUBLE_EQ(constant.ci->high, 1.0);
    EXPECT_DOUBLE_EQ(*constant.dof, 3.0);
}

TEST(Bootstrap, DeterministicAndSensible) {
    std::vector<double> values(40);
    std::iota(values.begin(), values.end(), 0.0);  // mean 19.5, sd 11.69; t interval about +-3.74
    const Statistic mean = [](std::span<const double> v) {
        return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    };
    const Interval first = bootstrap_percentile_ci(values, mean, 2000, 0.95, 7);
    const Interval again = bootstrap_percentile_ci(values, mean, 2000, 0.95, 7);
    EXPECT_EQ(first.low, again.low);
    EXPECT_EQ(first.high, again.high);
    EXPECT_NEAR(first.low, 19.5 - 3.6, 0.6);
    EXPECT_NEAR(first.high, 19.5 + 3.6, 0.6);
    const Interval other = bootstrap_percentile_ci(values, mean, 2000, 0.95, 8);
    EXPECT_NE(first.low, other.low);
    // One value: every resample is that value.
    const Interval single = bootstrap_percentile_ci(std::vector<double>{2.5}, mean, 10, 0.95, 1);
    EXPECT_DOUBLE_EQ(single.low, 2.5);
    EXPECT_DOUBLE_EQ(single.high, 2.5);
    EXPECT_THROW(bootstrap_percentile_ci(std::vector<double>{}, mean, 10, 0.95, 1), std::invalid_argument);
    EXPECT_THROW(bootstrap_percentile_ci(values, mean, 0, 0.95, 1), std::invalid_argument);
}

}  // namespace
}  // namespace normlab::stats
