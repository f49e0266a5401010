// Rounding float32 to a narrower format on the integer significand: the bits below the format's spacing
// at the value's exponent (coarser below its smallest normal) are dropped with round-half-to-even, and the
// result rebuilt exactly with ldexp, so one routine serves every format of the table.
#include "engine/core/number_formats.h"

#include <bit>
#include <cmath>
#include <limits>

namespace normlab {

const NumberFormatSpec& number_format_spec(NumberFormat format) {
    for (const NumberFormatSpec& spec : kNumberFormats)
        if (spec.format == format) return spec;
    return kNumberFormats[0];
}

std::optional<NumberFormat> number_format_named(std::string_view name) {
    for (const NumberFormatSpec& spec : kNumberFormats)
        if (name == spec.name) return spec.format;
    return std::nullopt;
}

std::string number_format_names() {
    std::string names;
    for (const NumberFormatSpec& spec : kNumberFormats)
        names += (names.empty() ? "" : ", ") + std::string(spec.name);
    return names;
}

namespace {
float rounded(float x, const NumberFormatSpec& spec) {
    const uint32_t bits = std::bit_cast<uint32_t>(x);
    const bool negative = (bits >> 31) != 0;
    const uint32_t magnitude = bits & 0x7FFFFFFFu;
    if (magnitude > 0x7F800000u) return std::numeric_limits<float>::quiet_NaN();
    if (magnitude == 0x7F800000u)
        return spec.has_infinity ? x : (negative ? -spec.max_finite : spec.max_finite);
    // The float's exponent as the spacing of its significand sees it: float subnormals share -126's.
    const int stored_exponent = static_cast<int>(magnitude >> 23);
    const int exponent = stored_exponent == 0 ? -126 : stored_exponent - 127;
    const uint32_t significand = (magnitude & 0x7FFFFFu) | (stored_exponent == 0 ? 0u : 0x800000u);
    const int min_normal_exponent = 2 - (1 << (spec.exponent_bits - 1));
    // Bits of the 24-bit significand below the format's spacing at this exponent.
    const int drop = 23 - spec.mantissa_bits + std::max(0, min_normal_exponent - exponent);
    if (drop <= 0) return x;
    if (drop > 24) return negative ? -0.0f : 0.0f;  // below half the smallest subnormal
    const uint32_t half = 1u << (drop - 1);
    const uint32_t remainder = significand & ((half << 1) - 1);
    uint32_t kept = significand >> drop;
    if (remainder > half || (remainder == half && (kept & 1u))) ++kept;
    float value = std::ldexp(static_cast<float>(kept), exponent - 23 + drop);
    if (value > spec.max_finite)
        value = spec.has_infinity ? std::numeric_limits<float>::infinity() : spec.max_finite;
    return negative ? -value : value;
}
}  // namespace

float round_to_format(float x, NumberFormat format) {
    return format == NumberFormat::Fp32 ? x : rounded(x, number_format_spec(format));
}

void round_to_format(std::span<float> values, NumberFormat format) {
    if (format == NumberFormat::Fp32) return;
    const NumberFormatSpec& spec = number_format_spec(format);
    for (float& value : values) value = rounded(value, spec);
}

}  // namespace normlab
