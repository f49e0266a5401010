// The formats' table looked up by name, and rounding float32 to them through format_rounding.h's routine
// (the one the backends' kernels use), with each format's limits derived from its table row.
#include "engine/core/number_formats.h"

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

FormatLimits format_limits(NumberFormat format) {
    const NumberFormatSpec& spec = number_format_spec(format);
    return {spec.mantissa_bits, 2 - (1 << (spec.exponent_bits - 1)), float_bits(spec.max_finite),
            spec.has_infinity};
}

float round_to_format(float x, NumberFormat format) {
    return round_with(format_limits(format), x).value;
}

void round_to_format(float* values, size_t count, NumberFormat format) {
    if (format == NumberFormat::Fp32) return;
    const FormatLimits limits = format_limits(format);
    for (size_t i = 0; i < count; ++i) values[i] = round_with(limits, values[i]).value;
}

}  // namespace normlab
