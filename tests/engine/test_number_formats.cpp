// Rounding to bf16, fp16 and fp8 e4m3 (engine/core/number_formats.h) on values whose answer follows from
// the formats' definitions: ties to even, overflow, the subnormal spacing, NaN and signed zeros. The
// bit-exact comparison with PyTorch's casts on a million values is tests/parity/precision_parity.py.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/core/number_formats.h"

namespace normlab {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(NumberFormats, TiesGoToTheEvenNeighbour) {
    // bf16 keeps 7 mantissa bits: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 (odd), so it falls to 1.
    EXPECT_EQ(round_to_format(1.0f + std::ldexp(1.0f, -8), NumberFormat::Bf16), 1.0f);
    EXPECT_EQ(round_to_format(1.0f + 3 * std::ldexp(1.0f, -8), NumberFormat::Bf16),
              1.0f + std::ldexp(1.0f, -6));
    EXPECT_EQ(round_to_format(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20), NumberFormat::Bf16),
              1.0f + std::ldexp(1.0f, -7));
    // fp16 keeps 10: 2049 is halfway between 2048 and 2050.
    EXPECT_EQ(round_to_format(2049.0f, NumberFormat::Fp16), 2048.0f);
    EXPECT_EQ(round_to_format(2051.0f, NumberFormat::Fp16), 2052.0f);
    // fp8 e4m3 keeps 3: 17 lies halfway between 16 and 18 (spacing 2), 9.5 between 9 and 10.
    EXPECT_EQ(round_to_format(17.0f, NumberFormat::Fp8E4M3), 16.0f);
    EXPECT_EQ(round_to_format(-19.0f, NumberFormat::Fp8E4M3), -20.0f);
    EXPECT_EQ(round_to_format(9.5f, NumberFormat::Fp8E4M3), 10.0f);
}

TEST(NumberFormats, OverflowIsInfinityOrSaturatesForFp8) {
    EXPECT_EQ(round_to_format(65504.0f, NumberFormat::Fp16), 65504.0f);
    EXPECT_EQ(round_to_format(65519.0f, NumberFormat::Fp16), 65504.0f);
    EXPECT_EQ(round_to_format(65520.0f, NumberFormat::Fp16), kInf);  // the tie rounds up to 2^16
    EXPECT_EQ(round_to_format(-1e6f, NumberFormat::Fp16), -kInf);
    EXPECT_EQ(round_to_format(3.4e38f, NumberFormat::Bf16), kInf);
    EXPECT_EQ(round_to_format(3.39e38f, NumberFormat::Bf16), 3.38953139e38f);
    EXPECT_EQ(round_to_format(448.0f, NumberFormat::Fp8E4M3), 448.0f);
    EXPECT_EQ(round_to_format(464.0f, NumberFormat::Fp8E4M3), 448.0f);  // a tie: 448 has the even mantissa
    EXPECT_EQ(round_to_format(470.0f, NumberFormat::Fp8E4M3), 448.0f);  // no infinity: saturated
    EXPECT_EQ(round_to_format(-kInf, NumberFormat::Fp8E4M3), -448.0f);
    EXPECT_TRUE(std::isnan(round_to_format(std::nanf(""), NumberFormat::Fp8E4M3)));
    EXPECT_EQ(round_to_format(kInf, NumberFormat::Fp16), kInf);
}

TEST(NumberFormats, SubnormalSpacingAndSignedZeros) {
    // fp16's smallest subnormal is 2^-24; 2^-25 is the tie with 0 (even), 3 2^-26 rounds up to it.
    EXPECT_EQ(round_to_format(std::ldexp(1.0f, -24), NumberFormat::Fp16), std::ldexp(1.0f, -24));
    EXPECT_EQ(round_to_format(std::ldexp(1.0f, -25), NumberFormat::Fp16), 0.0f);
    EXPECT_EQ(round_to_format(3 * std::ldexp(1.0f, -26), NumberFormat::Fp16), std::ldexp(1.0f, -24));
    EXPECT_EQ(round_to_format(3 * std::ldexp(1.0f, -24), NumberFormat::Fp16), 3 * std::ldexp(1.0f, -24));
    // fp8 e4m3: the smallest normal 2^-6, the smallest subnormal 2^-9.
    EXPECT_EQ(round_to_format(std::ldexp(1.0f, -10), NumberFormat::Fp8E4M3), 0.0f);
    EXPECT_EQ(round_to_format(3 * std::ldexp(1.0f, -11), NumberFormat::Fp8E4M3), std::ldexp(1.0f, -9));
    EXPECT_EQ(round_to_format(7 * std::ldexp(1.0f, -9), NumberFormat::Fp8E4M3), 7 * std::ldexp(1.0f, -9));
    // bf16 shares float32's exponent range: a float32 subnormal keeps its top 7 significant bits' spacing.
    const float tiny = std::numeric_limits<float>::denorm_min() * 0x18001;  // 2^-149 (2^16 + 2^15 + 1)
    EXPECT_EQ(round_to_format(tiny, NumberFormat::Bf16), std::numeric_limits<float>::denorm_min() * 0x20000);
    EXPECT_TRUE(std::signbit(round_to_format(-0.0f, NumberFormat::Fp16)));
    EXPECT_TRUE(std::signbit(round_to_format(-1e-30f, NumberFormat::Fp8E4M3)));
    EXPECT_TRUE(std::isnan(round_to_format(std::nanf(""), NumberFormat::Bf16)));
    EXPECT_EQ(round_to_format(0.1f, NumberFormat::Fp32), 0.1f);
}

TEST(NumberFormats, NamesAndSpansFollowTheTable) {
    EXPECT_EQ(number_format_named("fp8_e4m3"), NumberFormat::Fp8E4M3);
    EXPECT_FALSE(number_format_named("fp8"));
    EXPECT_EQ(number_format_names(), "fp32, bf16, fp16, fp8_e4m3");
    float values[] = {1.0f + std::ldexp(1.0f, -8), 2049.0f};
    round_to_format(values, 2, NumberFormat::Bf16);
    EXPECT_EQ(values[0], 1.0f);
    EXPECT_EQ(values[1], 2048.0f);
}

}  // namespace
}  // namespace normlab
