// UTF-8 validation for text corpora: finds the first ill-formed sequence (per Unicode table 3-7: no
// overlong forms, no surrogates, nothing above U+10FFFF, no truncated or stray bytes) and says why.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace normlab {

struct Utf8Error {
    std::size_t offset = 0;  // byte offset of the first byte of the ill-formed sequence
    std::string reason;      // e.g. "overlong encoding", "truncated sequence"
};

// Empty optional when `text` is well-formed UTF-8.
std::optional<Utf8Error> find_utf8_error(std::string_view text);

}  // namespace normlab
