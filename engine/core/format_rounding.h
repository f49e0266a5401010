// Rounding a float32 to a narrower format on its bits, for the host and the CUDA kernels alike: the one
// routine behind round_to_format (number_formats.h) and every backend's round_to_format op, so the
// emulated precision of training is the rounding the PyTorch parity test checks bit for bit.
#pragma once
#include <cstdint>

#include "engine/core/host_device.h"

namespace normlab {

// What rounding needs of a format, passed by value (a kernel argument).
struct FormatLimits {
    int mantissa_bits = 23;
    int min_normal_exponent = -126;          // of the format's smallest normal value, 2^this
    uint32_t max_finite_bits = 0x7F7FFFFFu;  // the float32 bits of its largest finite value
    bool has_infinity = true;
};

// The bits of a float and back (the compilers' bit cast: loops over it still vectorise).
NORMLAB_HOST_DEVICE inline uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    return __builtin_bit_cast(uint32_t, x);
#endif
}

NORMLAB_HOST_DEVICE inline float bits_float(uint32_t bits) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    return __builtin_bit_cast(float, bits);
#endif
}

// 2^k for k in [-149, 127], exactly.
NORMLAB_HOST_DEVICE inline float power_of_two(int k) {
    return k >= -126 ? bits_float(static_cast<uint32_t>(k + 127) << 23) : bits_float(1u << (k + 149));
}

// A rounded value and what happened to it: overflowed (finite, beyond the format's largest finite after
// rounding: infinity, or saturated where the format has none), underflowed (finite and not zero, rounded
// to zero or to a subnormal of the format).
struct RoundedValue {
    float value;
    uint32_t overflowed;  // 1 or 0 (counters add them; a loop of them vectorises)
    uint32_t underflowed;
};

// `when` (0 or 1) ? a : b, as bit masks.
NORMLAB_HOST_DEVICE inline uint32_t select_bits(uint32_t when, uint32_t a, uint32_t b) {
    const uint32_t mask = 0u - when;
    return (a & mask) | (b & ~mask);
}

// A format's limits as the rounding uses them, derived once (a loop hoists them).
struct RoundingRule {
    uint32_t drop;              // bits below a normal's spacing (0 for fp32)
    uint32_t low;               // their mask
    uint32_t lowest_kept_mask;  // 1, or 0 when nothing is dropped
    uint32_t min_normal_bits;
    uint32_t max_finite_bits;
    uint32_t infinity_bits;  // what infinity and overflow become: infinity, or the largest finite
    float subnormal_shift;   // 2^(min_normal_exponent - mantissa_bits + 23), see round_with
};

NORMLAB_HOST_DEVICE inline RoundingRule rounding_rule(const FormatLimits& format) {
    const uint32_t drop = static_cast<uint32_t>(23 - format.mantissa_bits);
    return {drop,
            (1u << drop) - 1u,
            drop > 0 ? 1u : 0u,
            static_cast<uint32_t>(format.min_normal_exponent + 127) << 23,
            format.max_finite_bits,
            format.has_infinity ? 0x7F800000u : format.max_finite_bits,
            power_of_two(format.min_normal_exponent + static_cast<int>(drop))};
}

// x rounded to nearest, ties to even, with NaN kept, zeros' signs kept and infinity saturated in a
// format without. Branch-free, so a loop over it vectorises: both roundings are computed and one chosen.
//  - from the format's smallest normal up: the bits below its spacing dropped on the integer bits (half
//    the dropped range minus one, plus the lowest kept bit, then the dropped bits cleared; a carry moves
//    into the exponent);
//  - below it: |x| + S - S in float32 with S = rule.subnormal_shift, whose spacing is the format's
//    subnormal step, so the hardware's own round-half-even does the rounding (exact: S and the result
//    are float32 normals; this needs no flush-to-zero, which NormLab never sets).
NORMLAB_HOST_DEVICE inline RoundedValue round_with(const RoundingRule& rule, float x) {
    const uint32_t bits = float_bits(x);
    const uint32_t sign = bits & 0x80000000u;
    const uint32_t magnitude = bits ^ sign;
    const uint32_t lowest_kept = (magnitude >> rule.drop) & rule.lowest_kept_mask;
    const uint32_t normal = (magnitude + (rule.low >> 1) + lowest_kept) & ~rule.low;
    const uint32_t subnormal =
        float_bits((bits_float(magnitude) + rule.subnormal_shift) - rule.subnormal_shift);
    // Selections by all-ones masks rather than branches, which compilers would thread into two paths.
    const uint32_t finite = magnitude < 0x7F800000u;
    uint32_t rounded = select_bits(magnitude < rule.min_normal_bits, subnormal, normal);
    const uint32_t overflowed = finite & (rounded > rule.max_finite_bits);
    rounded = select_bits(overflowed, rule.infinity_bits, rounded);
    const uint32_t special =
        select_bits(magnitude == 0x7F800000u, rule.infinity_bits, magnitude);  // NaN kept
    rounded = select_bits(finite, rounded, special);
    const uint32_t underflowed = finite & (magnitude != 0) & (rounded < rule.min_normal_bits);
    return {bits_float(sign | rounded), overflowed, underflowed};
}

NORMLAB_HOST_DEVICE inline RoundedValue round_with(const FormatLimits& format, float x) {
    return round_with(rounding_rule(format), x);
}

// The bits of |x| for a finite x, 0 for infinity and NaN: non-negative floats order as their bits do, so
// the largest of these is the largest finite |x|.
NORMLAB_HOST_DEVICE inline uint32_t finite_magnitude_bits(float x) {
    const uint32_t magnitude = float_bits(x) & 0x7FFFFFFFu;
    return select_bits(magnitude < 0x7F800000u, magnitude, 0u);
}

}  // namespace normlab
