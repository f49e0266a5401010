// Number formatting for messages and config round trips, in one place for the whole engine: the
// shortest text that reads back as the same double, so an error quotes exactly the value it rejects.
#pragma once
#include <string>

namespace normlab {

// Shortest text that reads back as the same double ("0.1", "1e-08", "nan", "inf").
std::string format_number(double value);

}  // namespace normlab
