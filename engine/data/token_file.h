// The token files `normlab-cli eval --tokens` reads: one sequence of integer token ids per line, ids
// separated by spaces or commas, blank lines skipped. Parsing is separate from the file so that the
// fuzz tests (tests/fuzz/fuzz_tokens.cpp) feed it text directly.
#pragma once
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace normlab {

// The sequences of `in`, each id in [0, vocab) and each line at most seq_len + 1 ids. Throws
// InputError naming `path`, the line and the problem.
std::vector<std::vector<int32_t>> parse_token_lines(std::istream& in, const std::string& path, int vocab,
                                                    int seq_len);

// The same from the file at `path`; also an InputError when it cannot be read or is not a regular file.
std::vector<std::vector<int32_t>> read_token_file(const std::string& path, int vocab, int seq_len);

}  // namespace normlab
