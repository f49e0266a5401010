// Student's t and the standard normal distribution: upper-tail probabilities and two-sided quantiles,
// computed here (no statistics library in the build): the t tail through the regularized incomplete
// beta function (a modified-Lentz continued fraction), quantiles by bisection on the tail.
#pragma once

namespace normlab::stats {

// I_x(a, b) for a, b > 0 and x in [0, 1]; `y` is 1 - x, given separately so that x near 1 keeps its
// precision. Relative error about 1e-14 for the a, b these tails use.
double regularized_incomplete_beta(double a, double b, double x, double y);

// P(T > t) for T ~ Student t with `dof` > 0 degrees of freedom (real: Welch's are fractional);
// dof = +infinity is the standard normal.
double student_t_upper_tail(double t, double dof);

// The p-quantile of Student t with `dof` degrees of freedom, p in (0, 1): t_{0.975, 9} = 2.2621572.
// dof = +infinity gives the standard normal's (1.959964 at 0.975). Throws std::invalid_argument for
// p outside (0, 1) or dof <= 0 or NaN.
double student_t_quantile(double p, double dof);

// The standard normal's p-quantile, p in (0, 1).
double normal_quantile(double p);

}  // namespace normlab::stats
