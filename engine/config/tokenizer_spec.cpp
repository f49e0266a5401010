// parse_tokenizer: the three forms of data.tokenizer, and a refusal that names them.
#include "engine/config/tokenizer_spec.h"

#include <charconv>

#include "engine/core/errors.h"

namespace normlab {

namespace {

const char* kForms =
    "use bytes, bpe:N (a BPE vocabulary of N pieces trained on the text, N from 260 to 65536, e.g. "
    "bpe:1024) or the path of a SentencePiece .model file";

}  // namespace

TokenizerSpec parse_tokenizer(const std::string& text) {
    if (text == "bytes") return {};
    if (text.empty()) throw InputError(std::string("data.tokenizer is empty; ") + kForms);
    if (text.rfind("bpe", 0) == 0 && (text.size() == 3 || text[3] == ':')) {
        const std::string number = text.size() > 4 ? text.substr(4) : "";
        int pieces = 0;
        const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), pieces);
        if (number.empty() || error != std::errc() || end != number.data() + number.size())
            throw InputError("data.tokenizer = '" + text +
                             "' names no vocabulary size; write bpe:N with N a whole "
                             "number from " +
                             std::to_string(kMinBpePieces) + ", e.g. bpe:1024");
        if (pieces < kMinBpePieces || pieces > kMaxBpePieces)
            throw InputError("data.tokenizer = '" + text + "': a BPE vocabulary needs " +
                             std::to_string(kMinBpePieces) + " to " + std::to_string(kMaxBpePieces) +
                             " pieces (256 bytes and 3 special pieces come first); e.g. bpe:1024");
        return {TokenizerSpec::Kind::Bpe, pieces, ""};
    }
    return {TokenizerSpec::Kind::File, 0, text};
}

}  // namespace normlab
