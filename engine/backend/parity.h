// How far one backend's results are from the reference's: the comparisons and tolerances shared by the
// GPU self-check (selftest.h), the CUDA parity tests (tests/cuda/) and the fast-vs-reference CPU op tests
// (tests/engine/gradient_check.h), so that all three hold a backend to the same rule.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace normlab {

// The tolerances of the parity tests: relative 1e-4 for tensors and telemetry (fp32 rounding in a
// different order, e.g. fused multiply-adds and other reduction trees on a GPU), 1e-3 for ratios of
// variances, whose rounding adds up from both terms. Counts (scored rows, correct rows) must be equal.
inline constexpr double kParityTolerance = 1e-4;
inline constexpr double kRatioParityTolerance = 1e-3;

// One comparison: its worst relative error over the compared values and where that was.
struct ParityCheck {
    static constexpr size_t kNoElement = static_cast<size_t>(-1);
    std::string what;  // e.g. "blocks.0.norm1.weight gradient", "resid"
    double error = 0.0;
    double tolerance = 0.0;
    size_t index = 0;  // the element with the worst error (kNoElement: the sizes differ)
    size_t count = 0;  // values compared
    double actual = 0.0, reference = 0.0;

    // A NaN error (a non-finite value where the reference has a finite one) fails.
    bool passed() const { return error <= tolerance; }
    // How far it is above its tolerance (the worst of several checks has the largest).
    double severity() const;
    // "blocks.0.norm1.weight gradient off by 1.0e-02 relative (tolerance 1.0e-04): element 3 is 0.505,
    // reference 0.5" ("loss off by ...: 3.31, reference 3.30" for a single value)
    std::string describe() const;
};

// Tensors: the largest |actual - reference| relative to the reference's largest magnitude (a tensor's
// values share one scale, so a value that is rounding noise around zero cannot fail on its own). A
// non-finite actual value, or a size mismatch, is an infinite error.
ParityCheck compare_tensors(std::string what, const std::vector<float>& actual,
                            const std::vector<float>& reference, double tolerance = kParityTolerance);

// Lists of measurements with scales of their own (telemetry, per block): each |actual - reference| relative
// to max(floor, |reference|). The default floor 1 makes values near zero (a mean logit) absolute; sums of
// squares, which cannot cancel, compare with a floor near 0.
ParityCheck compare_values(std::string what, const std::vector<double>& actual,
                           const std::vector<double>& reference, double tolerance = kParityTolerance,
                           double floor = 1.0);

// Formats a relative error or tolerance for messages and tables: "1.0e-02".
std::string format_relative(double value);

}  // namespace normlab
