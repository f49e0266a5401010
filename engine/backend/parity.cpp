// The comparisons of parity.h: the worst relative error of a tensor or a list of measurements against the
// reference's, and the sentence that names it.
#include "engine/backend/parity.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <utility>

namespace normlab {

namespace {

constexpr double kInfinite = std::numeric_limits<double>::infinity();

ParityCheck size_mismatch(std::string what, size_t actual, size_t reference, double tolerance) {
    ParityCheck check{std::move(what), kInfinite, tolerance};
    check.index = ParityCheck::kNoElement;
    check.actual = static_cast<double>(actual);
    check.reference = static_cast<double>(reference);
    return check;
}

// Keeps the element with the largest error (a NaN error counts as infinite).
void note_error(ParityCheck& check, size_t index, double error, double actual, double reference) {
    if (std::isnan(error)) error = kInfinite;
    if (error > check.error) {
        check.error = error;
        check.index = index;
        check.actual = actual;
        check.reference = reference;
    }
}

std::string format_value(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.7g", value);
    return text;
}

}  // namespace

double ParityCheck::severity() const {
    return tolerance > 0.0 ? error / tolerance : (error > 0.0 ? kInfinite : 0.0);
}

std::string ParityCheck::describe() const {
    if (index == kNoElement) {
        return what + " has " + format_value(actual) + " values, reference " + format_value(reference);
    }
    const std::string element = count == 1 ? "" : "element " + std::to_string(index) + " is ";
    return what + " off by " + format_relative(error) + " relative (tolerance " + format_relative(tolerance) +
           "): " + element + format_value(actual) + ", reference " + format_value(reference);
}

ParityCheck compare_tensors(std::string what, const std::vector<float>& actual,
                            const std::vector<float>& reference, double tolerance) {
    if (actual.size() != reference.size())
        return size_mismatch(std::move(what), actual.size(), reference.size(), tolerance);
    double scale = 1e-12;
    for (float value : reference) scale = std::max(scale, std::abs(static_cast<double>(value)));
    ParityCheck check{std::move(what), 0.0, tolerance};
    check.count = actual.size();
    for (size_t i = 0; i < actual.size(); ++i) {
        const double error = std::isfinite(actual[i])
                                 ? std::abs(static_cast<double>(actual[i]) - reference[i]) / scale
                                 : kInfinite;
        note_error(check, i, error, actual[i], reference[i]);
    }
    return check;
}

ParityCheck compare_values(std::string what, const std::vector<double>& actual,
                           const std::vector<double>& reference, double tolerance, double floor) {
    if (actual.size() != reference.size())
        return size_mismatch(std::move(what), actual.size(), reference.size(), tolerance);
    ParityCheck check{std::move(what), 0.0, tolerance};
    check.count = actual.size();
    for (size_t i = 0; i < actual.size(); ++i) {
        // also equal infinities, and the same NaN (a value neither recorded, engine/core/not_recorded.h)
        const bool same = actual[i] == reference[i] ||
                          std::bit_cast<uint64_t>(actual[i]) == std::bit_cast<uint64_t>(reference[i]);
        const double error =
            same ? 0.0 : std::abs(actual[i] - reference[i]) / std::max(floor, std::abs(reference[i]));
        note_error(check, i, std::isfinite(actual[i]) || same ? error : kInfinite, actual[i], reference[i]);
    }
    return check;
}

std::string format_relative(double value) {
    if (std::isinf(value)) return "inf";
    if (std::isnan(value)) return "nan";
    char text[32];
    std::snprintf(text, sizeof text, "%.1e", value);
    return text;
}

}  // namespace normlab
