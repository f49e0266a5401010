// The t tail is 0.5 I_{dof/(dof+t^2)}(dof/2, 1/2); quantiles solve tail(t) = 1 - p by bisection, which
// cannot fail to converge, to the last bits of a double. Above 1e8 degrees of freedom the tail's
// continued fraction grows slow and the first Cornish-Fisher term is exact to double precision.
#include "engine/stats/student_t.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace normlab::stats {

namespace {
constexpr double kTiny = 1e-300;
constexpr int kMaxTerms = 1000000;

// The continued fraction of I_x(a, b) (Numerical Recipes' betacf, modified Lentz): converges fast for
// x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
    const double qab = a + b, qap = a + 1.0, qam = a - 1.0;
    double c = 1.0;
    double d = 1.0 - qab * x / qap;
    if (std::fabs(d) < kTiny) d = kTiny;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= kMaxTerms; ++m) {
        const double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if (std::fabs(d) < kTiny) d = kTiny;
        c = 1.0 + aa / c;
        if (std::fabs(c) < kTiny) c = kTiny;
        d = 1.0 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if (std::fabs(d) < kTiny) d = kTiny;
        c = 1.0 + aa / c;
        if (std::fabs(c) < kTiny) c = kTiny;
        d = 1.0 / d;
        const double delta = d * c;
        h *= delta;
        if (std::fabs(delta - 1.0) < 1e-16) return h;
    }
    return std::numeric_limits<double>::quiet_NaN();
}

// The x where `upper_tail` (decreasing, upper_tail(0) = 0.5) equals q in (0, 0.5].
template <typename Tail>
double solve_upper_tail(Tail upper_tail, double q) {
    double low = 0.0, high = 1.0;
    while (upper_tail(high) > q) {
        low = high;
        high *= 2.0;
        if (!std::isfinite(high)) return high;
    }
    for (int i = 0; i < 2000 && low < high; ++i) {
        const double mid = 0.5 * (low + high);
        if (mid <= low || mid >= high) break;  // adjacent doubles: done
        (upper_tail(mid) > q ? low : high) = mid;
    }
    return 0.5 * (low + high);
}

double normal_upper_tail(double z) {
    return 0.5 * std::erfc(z / std::sqrt(2.0));
}

// A two-sided quantile through the upper tail: symmetric, so p < 0.5 is minus the (1 - p) one.
template <typename Tail>
double quantile_by_tail(double p, Tail upper_tail) {
    if (!(p > 0.0 && p < 1.0)) throw std::invalid_argument("a quantile needs p in (0, 1)");
    if (p == 0.5) return 0.0;
    return p > 0.5 ? solve_upper_tail(upper_tail, 1.0 - p) : -solve_upper_tail(upper_tail, p);
}
}  // namespace

double regularized_incomplete_beta(double a, double b, double x, double y) {
    if (x <= 0.0) return 0.0;
    if (y <= 0.0) return 1.0;
    const double log_front =
        std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log(y);
    const double front = std::exp(log_front);
    if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(a, b, x) / a;
    return 1.0 - front * beta_continued_fraction(b, a, y) / b;
}

double student_t_upper_tail(double t, double dof) {
    if (std::isinf(dof)) return normal_upper_tail(t);
    if (t < 0.0) return 1.0 - student_t_upper_tail(-t, dof);
    const double t2 = t * t;
    return 0.5 * regularized_incomplete_beta(0.5 * dof, 0.5, dof / (dof + t2), t2 / (dof + t2));
}

double student_t_quantile(double p, double dof) {
    if (!(dof > 0.0)) throw std::invalid_argument("Student t needs degrees of freedom > 0");
    if (dof > 1e8) {
        const double z = normal_quantile(p);
        return std::isinf(dof) ? z : z + (z * z * z + z) / (4.0 * dof);
    }
    return quantile_by_tail(p, [dof](double t) { return student_t_upper_tail(t, dof); });
}

double normal_quantile(double p) {
    return quantile_by_tail(p, normal_upper_tail);
}

}  // namespace normlab::stats
