// The narrow floating-point formats of mixed-precision training (bf16, fp16, fp8 e4m3) and the rounding
// of float32 values to them: round to nearest, ties to even, as PyTorch's .to(dtype) does, the result
// kept as the float32 value it stands for. One table names the formats and their limits.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/core/format_rounding.h"

namespace normlab {

enum class NumberFormat { Fp32, Bf16, Fp16, Fp8E4M3 };

struct NumberFormatSpec {
    NumberFormat format;
    const char* name;   // as config values spell it
    int exponent_bits;  // fp32 has 8, 23
    int mantissa_bits;
    bool has_infinity;  // fp8 e4m3 ("fn") has none: what overflows saturates at the largest finite
    float max_finite;
};

inline constexpr NumberFormatSpec kNumberFormats[] = {
    {NumberFormat::Fp32, "fp32", 8, 23, true, 3.40282347e38f},
    {NumberFormat::Bf16, "bf16", 8, 7, true, 3.38953139e38f},  // (2 - 2^-7) 2^127
    {NumberFormat::Fp16, "fp16", 5, 10, true, 65504.0f},
    {NumberFormat::Fp8E4M3, "fp8_e4m3", 4, 3, false, 448.0f},
};

const NumberFormatSpec& number_format_spec(NumberFormat format);
// The format a name stands for ("bf16"), or nothing; the names, comma-separated, for messages.
std::optional<NumberFormat> number_format_named(std::string_view name);
std::string number_format_names();

// `x` rounded to `format` (round to nearest, ties to even; below the smallest normal the format's
// subnormal spacing), as a float32. Beyond the largest finite value: infinity with the sign, or for a
// format without infinities (fp8 e4m3) the largest finite with the sign, infinities included, as
// PyTorch's cast does (measured: torch 2.15). NaN stays NaN; zeros keep their sign. Fp32 returns `x`.
float round_to_format(float x, NumberFormat format);
void round_to_format(float* values, size_t count, NumberFormat format);
// What format_rounding.h's round_with needs of `format` (fp32: nothing is ever dropped).
FormatLimits format_limits(NumberFormat format);

}  // namespace normlab
