// eval --text: choosing the tokenizer, and cutting the tokenized text into the model's windows.
#include "app/cli/eval_text.h"

#include <filesystem>

#include "engine/config/tokenizer_spec.h"
#include "engine/core/errors.h"
#include "engine/data/user_file.h"
#include "engine/data/utf8.h"

namespace normlab::cli {

std::unique_ptr<Tokenizer> eval_tokenizer(const std::optional<std::string>& setting,
                                          const std::string& model_path, const Config* config) {
    if (setting) {
        if (parse_tokenizer(*setting).kind == TokenizerSpec::Kind::Bpe)
            throw InputError(
                "eval --tokenizer " + *setting +
                ": a BPE vocabulary is learnt from training text, not from the text being scored; "
                "give the model's own: bytes or a .model file (a run folder's tokenizer.model)");
        return make_tokenizer(*setting, "", "");
    }
    const std::filesystem::path folder = std::filesystem::is_directory(model_path)
                                             ? std::filesystem::path(model_path)
                                             : std::filesystem::path(model_path).parent_path();
    const std::filesystem::path kept = (folder.empty() ? "." : folder) / "tokenizer.model";
    if (std::filesystem::is_regular_file(kept)) return make_tokenizer(kept.string(), "", "");
    if (config && parse_tokenizer(config->data.tokenizer).kind == TokenizerSpec::Kind::Bytes)
        return make_byte_tokenizer();
    const std::string trained = config ? "was trained with data.tokenizer = " + config->data.tokenizer
                                       : "is a Hugging Face model with its own vocabulary";
    throw InputError("eval --text: the model " + trained + " and no tokenizer.model is beside it (" +
                     kept.string() + "); give its tokenizer with --tokenizer FILE.model");
}

TextWindows read_text_windows(const std::string& path, const Tokenizer& tokenizer, int vocab, int seq_len) {
    const std::string text =
        read_user_file(path, {"eval --text", "text file", "give a UTF-8 text file", uintmax_t{1} << 30});
    if (const auto error = find_utf8_error(text))
        throw InputError("eval --text: '" + path + "' is not valid UTF-8: " + error->reason +
                         " at byte offset " + std::to_string(error->offset) + "; re-save it as UTF-8");
    const std::vector<int32_t> tokens = tokenizer.encode(text);
    if (tokens.size() < 2)
        throw InputError("eval --text: '" + path + "' is " + std::to_string(tokens.size()) +
                         " token(s) with " + tokenizer.description() + "; scoring needs at least two");
    if (tokenizer.vocab_size() > vocab)
        throw InputError("eval --text: " + tokenizer.description() + " has " +
                         std::to_string(tokenizer.vocab_size()) +
                         " pieces, more than the model's vocabulary of " + std::to_string(vocab) +
                         "; give the tokenizer the model was trained with (--tokenizer)");
    TextWindows windows;
    windows.text_bytes = static_cast<int64_t>(text.size());
    const auto step = static_cast<std::size_t>(seq_len);
    for (std::size_t begin = 0; begin + 1 < tokens.size(); begin += step) {
        const std::size_t end = std::min(tokens.size(), begin + step + 1);
        windows.sequences.emplace_back(tokens.begin() + static_cast<std::ptrdiff_t>(begin),
                                       tokens.begin() + static_cast<std::ptrdiff_t>(end));
    }
    return windows;
}

}  // namespace normlab::cli
