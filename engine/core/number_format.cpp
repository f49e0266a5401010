// format_number: std::to_chars' shortest round-trip form, independent of the locale and of stream state.
// Used by config validation and the data tasks' messages alike.
#include "engine/core/number_format.h"

#include <array>
#include <charconv>

namespace normlab {

std::string format_number(double value) {
    std::array<char, 64> buffer{};
    const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    return std::string(buffer.data(), result.ptr);
}

void write_csv_number(std::ostream& out, std::optional<double> value) {
    out << ',';
    if (value) out << format_number(*value);
}

}  // namespace normlab
