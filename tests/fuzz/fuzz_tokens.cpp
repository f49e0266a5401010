// Feeds `eval --tokens` text to parse_token_lines: byte 0 picks the vocabulary, byte 1 the context
// length, the rest is the file. Beyond no crash: only InputError escapes, and a file read gives
// non-empty sequences of in-range ids, each within seq_len + 1, with one id per field of the text.
#include <sstream>

#include "engine/core/errors.h"
#include "engine/data/token_file.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

// The fields of `text` (runs of neither whitespace nor commas), as the tokens file defines them.
size_t field_count(std::string text) {
    for (char& c : text) c = c == ',' ? ' ' : c;
    std::istringstream in(text);
    size_t count = 0;
    for (std::string field; in >> field;) ++count;
    return count;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const int vocab = 1 + data[0] * 37;
    const int seq_len = 1 + data[1] % 64;
    const std::string text(normlab::fuzz::as_text(data + 2, size - 2));
    std::istringstream in(text);
    std::vector<std::vector<int32_t>> sequences;
    try {
        sequences = normlab::parse_token_lines(in, "tokens.txt", vocab, seq_len);
    } catch (const normlab::InputError&) {
        return 0;
    }
    size_t ids = 0;
    for (const std::vector<int32_t>& sequence : sequences) {
        FUZZ_CHECK(!sequence.empty() && sequence.size() <= static_cast<size_t>(seq_len) + 1,
                   "a sequence is empty or longer than seq_len + 1");
        for (const int32_t id : sequence) FUZZ_CHECK(id >= 0 && id < vocab, "a token id outside [0, vocab)");
        ids += sequence.size();
    }
    FUZZ_CHECK(ids == field_count(text), "the ids read are not one per field of the file");
    return 0;
}
