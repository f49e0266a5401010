// Number formatting for messages and config round trips, in one place for the whole engine: the
// shortest text that reads back as the same double, so an error quotes exactly the value it rejects.
#pragma once
#include <optional>
#include <ostream>
#include <string>

namespace normlab {

// Shortest text that reads back as the same double ("0.1", "1e-08", "nan", "inf").
std::string format_number(double value);
// One CSV cell of a number: ',' then its format_number text (nothing after the ',' for no value).
void write_csv_number(std::ostream& out, std::optional<double> value);

}  // namespace normlab
