// parse_json: nlohmann's parser with a callback that sees each container's depth and stops the parse
// at kMaxJsonDepth, before the value is built any deeper; messages give the error's line and column.
#include "engine/core/json_read.h"

#include <algorithm>

#include "engine/core/errors.h"
#include "engine/core/small_file.h"

namespace normlab {

namespace {
struct TooDeep {};

// "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." -> "syntax
// error ...", "[json.exception.out_of_range.406] number overflow parsing '1e999'" -> without the tag.
std::string error_detail(const nlohmann::json::exception& e) {
    std::string what = e.what();
    const size_t tag_end = what.find("] ");
    if (tag_end != std::string::npos) what = what.substr(tag_end + 2);
    const size_t colon = what.find(": ");
    if (what.starts_with("parse error") && colon != std::string::npos) what = what.substr(colon + 2);
    return text_excerpt(what, 200);
}

std::string error_position(std::string_view text, size_t byte) {
    const size_t end = std::min(byte == 0 ? 0 : byte - 1, text.size());
    const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + end, '\n'));
    const size_t line_start = text.rfind('\n', end == 0 ? 0 : end - 1);
    const size_t column = line == 1 ? end + 1 : end - line_start;
    return "line " + std::to_string(line) + ", column " + std::to_string(column) + " (byte " +
           std::to_string(byte) + ")";
}

template <typename Json>
Json parse_limited(std::string_view text, bool comments) {
    const typename Json::parser_callback_t limit = [](int depth, nlohmann::detail::parse_event_t event,
                                                      Json&) {
        const bool opens = event == nlohmann::detail::parse_event_t::object_start ||
                           event == nlohmann::detail::parse_event_t::array_start;
        if (opens && depth >= kMaxJsonDepth) throw TooDeep{};
        return true;
    };
    return Json::parse(text, limit, true, comments);
}
}  // namespace

template <typename Json>
Json parse_json(std::string_view text, const std::string& source, bool comments) {
    try {
        return parse_limited<Json>(text, comments);
    } catch (const TooDeep&) {
        throw InputError(source + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels of arrays and objects; no NormLab file needs that, so it is refused");
    } catch (const nlohmann::json::parse_error& e) {
        throw InputError(source + ": invalid JSON at " + error_position(text, e.byte) + ": " +
                         error_detail(e) + "; fix the JSON syntax");
    } catch (const nlohmann::json::exception& e) {
        throw InputError(source + ": invalid JSON: " + error_detail(e) + "; fix the JSON syntax");
    }
}

template <typename Json>
std::optional<Json> parse_json_or_nothing(std::string_view text) {
    try {
        return parse_limited<Json>(text, false);
    } catch (const TooDeep&) {
    } catch (const nlohmann::json::exception&) {
    }
    return std::nullopt;
}

template <typename Json>
Json read_json_file(const std::string& path, const std::string& what, bool comments) {
    return parse_json<Json>(read_small_file(path, kMaxJsonFileBytes, what), what + " '" + path + "'",
                            comments);
}

template nlohmann::json parse_json(std::string_view, const std::string&, bool);
template nlohmann::ordered_json parse_json(std::string_view, const std::string&, bool);
template std::optional<nlohmann::json> parse_json_or_nothing(std::string_view);
template std::optional<nlohmann::ordered_json> parse_json_or_nothing(std::string_view);
template nlohmann::json read_json_file(const std::string&, const std::string&, bool);
template nlohmann::ordered_json read_json_file(const std::string&, const std::string&, bool);

std::string text_excerpt(std::string_view text, size_t max_chars) {
    if (text.size() <= max_chars) return std::string(text);
    return std::string(text.substr(0, max_chars)) + "...";
}

std::string json_excerpt(const nlohmann::json& value, size_t max_chars) {
    return text_excerpt(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max_chars);
}

std::string json_excerpt(const nlohmann::ordered_json& value, size_t max_chars) {
    return text_excerpt(value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace),
                        max_chars);
}

}  // namespace normlab
