// UTF-8 validation (see utf8.h): a byte-by-byte walk over the well-formed ranges of Unicode
// table 3-7, reporting the offset of the sequence that breaks them and the kind of breakage.
#include "engine/data/utf8.h"

#include <cstdint>

namespace normlab {

namespace {

bool is_continuation(uint8_t byte) {
    return (byte & 0xC0) == 0x80;
}

std::string hex_byte(uint8_t byte) {
    static const char* digits = "0123456789ABCDEF";
    return std::string("0x") + digits[byte >> 4] + digits[byte & 0xF];
}

}  // namespace

std::optional<Utf8Error> find_utf8_error(std::string_view text) {
    const std::size_t size = text.size();
    std::size_t i = 0;
    while (i < size) {
        const uint8_t lead = static_cast<uint8_t>(text[i]);
        if (lead < 0x80) {
            ++i;
            continue;
        }
        int length = 0;
        // Allowed range of the second byte; the later ones are always 0x80..0xBF.
        uint8_t second_lo = 0x80;
        uint8_t second_hi = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            if (lead == 0xE0) second_lo = 0xA0;  // below: overlong
            if (lead == 0xED) second_hi = 0x9F;  // above: UTF-16 surrogates
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            if (lead == 0xF0) second_lo = 0x90;  // below: overlong
            if (lead == 0xF4) second_hi = 0x8F;  // above: beyond U+10FFFF
        } else if (is_continuation(lead)) {
            return Utf8Error{i, "unexpected continuation byte " + hex_byte(lead)};
        } else if (lead == 0xC0 || lead == 0xC1) {
            return Utf8Error{i, "overlong encoding (lead byte " + hex_byte(lead) + ")"};
        } else {
            return Utf8Error{i, "invalid byte " + hex_byte(lead) + " (beyond U+10FFFF or never used)"};
        }
        for (int k = 1; k < length; ++k) {
            if (i + k >= size) return Utf8Error{i, "truncated sequence at the end of the text"};
            const uint8_t byte = static_cast<uint8_t>(text[i + k]);
            if (!is_continuation(byte)) return Utf8Error{i, "truncated sequence"};
            if (k == 1 && (byte < second_lo || byte > second_hi)) {
                if (lead == 0xED) return Utf8Error{i, "encoded UTF-16 surrogate"};
                if (lead == 0xF4) return Utf8Error{i, "code point above U+10FFFF"};
                return Utf8Error{i, "overlong encoding"};
            }
        }
        i += static_cast<std::size_t>(length);
    }
    return std::nullopt;
}

}  // namespace normlab
