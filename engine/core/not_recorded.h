// The value of a measurement its writer did not record (a role the model lacks, a field a writer does
// not measure, attention not sampled on that step): one NaN bit pattern every layer shares, so readers
// see a gap and writers and exports can tell it from a measured value that is not finite.
#pragma once
#include <bit>
#include <cstdint>

namespace normlab {

inline constexpr double kNotRecorded = std::bit_cast<double>(uint64_t{0x7ff8'0000'4e4f'5452});
inline bool recorded(double value) {
    return std::bit_cast<uint64_t>(value) != std::bit_cast<uint64_t>(kNotRecorded);
}

}  // namespace normlab
