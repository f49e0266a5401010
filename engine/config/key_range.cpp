// KeyRange's membership test and its text for messages and docs; the ranges themselves are in the
// key table (config_keys.cpp).
#include "engine/config/key_range.h"

#include <cmath>

#include "engine/core/number_format.h"

namespace normlab {
namespace {

std::string bound_text(double bound, bool integer) {
    return integer ? std::to_string(static_cast<long long>(bound)) : format_number(bound);
}

}  // namespace

bool KeyRange::contains(double value) const {
    const bool above_lo = lo_included ? value >= lo : value > lo;
    const bool below_hi = std::isinf(hi) || (hi_included ? value <= hi : value < hi);
    return std::isfinite(value) && above_lo && below_hi;
}

std::string interval_text(const KeyRange& range, bool integer) {
    const std::string lo = bound_text(range.lo, integer);
    if (std::isinf(range.hi)) return (range.lo_included ? ">= " : "> ") + lo;
    return (range.lo_included ? "[" : "(") + lo + ", " + bound_text(range.hi, integer) +
           (range.hi_included ? "]" : ")");
}

std::string range_expectation(const KeyRange& range, bool integer) {
    const std::string kind = integer ? "an integer " : "a finite number ";
    return kind + (std::isinf(range.hi) ? "" : "in ") + interval_text(range, integer);
}

}  // namespace normlab
