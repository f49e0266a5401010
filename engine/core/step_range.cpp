// parse_step_range: two optional whole numbers around a colon.
#include "engine/core/step_range.h"

#include <charconv>

#include "engine/core/errors.h"

namespace normlab {

namespace {
bool read_step(const std::string& text, int64_t& out) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc() && end == text.data() + text.size() && out >= 0;
}
}  // namespace

StepRange parse_step_range(const std::string& text) {
    const auto fail = [&text]() -> StepRange {
        throw InputError("--steps " + text +
                         ": write FIRST:LAST with whole steps, FIRST <= LAST (e.g. 100:2000; "
                         "100: or :2000 leave one end open)");
    };
    const size_t colon = text.find(':');
    if (colon == std::string::npos || text.size() == 1) return fail();
    StepRange range;
    const std::string first = text.substr(0, colon), last = text.substr(colon + 1);
    if (!first.empty() && !read_step(first, range.first)) return fail();
    if (!last.empty() && !read_step(last, range.last)) return fail();
    if (range.first > range.last) return fail();
    return range;
}

}  // namespace normlab
