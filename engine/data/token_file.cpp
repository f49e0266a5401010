// Token files for eval: each line split at spaces and commas, each field a whole decimal id checked
// against the vocabulary, each line's length against the model's context.
#include "engine/data/token_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/errors.h"

namespace normlab {

namespace {

// One field as a token id, or an InputError saying where (`where`) and why.
int32_t token_id(const std::string& field, int vocab, const std::string& where) {
    long long id = -1;
    size_t used = 0;
    try {
        id = std::stoll(field, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != field.size()) throw InputError(where + ": '" + field + "' is not an integer token id");
    if (id < 0 || id >= vocab) {
        throw InputError(where + ": token id " + field + " is outside the model's vocabulary [0, " +
                         std::to_string(vocab) + ")");
    }
    return static_cast<int32_t>(id);
}

std::vector<int32_t> line_ids(std::string line, int vocab, const std::string& where) {
    for (char& c : line) c = c == ',' ? ' ' : c;
    std::istringstream fields(line);
    std::vector<int32_t> ids;
    std::string field;
    while (fields >> field) ids.push_back(token_id(field, vocab, where));
    return ids;
}

}  // namespace

std::vector<std::vector<int32_t>> parse_token_lines(std::istream& in, const std::string& path, int vocab,
                                                    int seq_len) {
    std::vector<std::vector<int32_t>> sequences;
    std::string line;
    int line_number = 0;
    while (std::getline(in, line)) {
        ++line_number;
        const std::string where = "tokens file '" + path + "' line " + std::to_string(line_number);
        std::vector<int32_t> ids = line_ids(line, vocab, where);
        if (ids.empty()) continue;
        if (static_cast<int64_t>(ids.size()) > static_cast<int64_t>(seq_len) + 1) {
            throw InputError(where + " has " + std::to_string(ids.size()) +
                             " ids; the model takes at most model.seq_len + 1 = " +
                             std::to_string(static_cast<int64_t>(seq_len) + 1) + " (split the line)");
        }
        sequences.push_back(std::move(ids));
    }
    return sequences;
}

std::vector<std::vector<int32_t>> read_token_file(const std::string& path, int vocab, int seq_len) {
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
        throw InputError("tokens file '" + path + "' is not a regular file; give the path of a text file");
    std::ifstream in(path);
    if (!in) throw InputError("cannot read tokens file '" + path + "'; check the path");
    return parse_token_lines(in, path, vocab, seq_len);
}

}  // namespace normlab
