// A span of training steps, [first, last], as given on command lines ("A:B", "A:" or ":B"): the
// CLI's export --steps and the window's --steps read it with the same rules and messages.
#pragma once
#include <cstdint>
#include <limits>
#include <string>

namespace normlab {

struct StepRange {
    int64_t first = 0;
    int64_t last = std::numeric_limits<int64_t>::max();
    bool contains(int64_t step) const { return step >= first && step <= last; }
};

// Throws InputError saying what to write when `text` is not "A:B" with 0 <= A <= B (either side may
// be left out).
StepRange parse_step_range(const std::string& text);

}  // namespace normlab
