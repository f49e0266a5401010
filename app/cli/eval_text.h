// `normlab-cli eval --text FILE`: a UTF-8 text scored by a checkpoint through the tokenizer it was trained
// with (the run folder's tokenizer.model, the config's bytes, or --tokenizer), as consecutive windows of
// model.seq_len + 1 tokens that predict every token after the first exactly once.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/config.h"
#include "engine/data/tokenizer.h"

namespace normlab::cli {

// Which tokenizer scores the text: `setting` (--tokenizer: bytes or a .model file) when given; else the
// tokenizer.model beside `model_path` (a checkpoint's run folder, a Hugging Face model's folder); else
// bytes when `config` (the checkpoint's, when there is one) was trained on bytes. Throws InputError
// saying what to give otherwise.
std::unique_ptr<Tokenizer> eval_tokenizer(const std::optional<std::string>& setting,
                                          const std::string& model_path, const Config* config);

struct TextWindows {
    std::vector<std::vector<int32_t>> sequences;
    int64_t text_bytes = 0;
};

// The text's tokens in windows of at most seq_len + 1, each starting at the previous one's last token.
// Throws InputError for an unreadable or non-UTF-8 file, fewer than two tokens, or a token the model's
// `vocab` lacks.
TextWindows read_text_windows(const std::string& path, const Tokenizer& tokenizer, int vocab, int seq_len);

}  // namespace normlab::cli
