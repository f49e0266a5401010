// Private to engine/data: the SentencePiece tokenizers behind make_tokenizer (engine/data/tokenizer.h):
// a BPE model trained on a text (and its cache), and a .model file read from disk.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "engine/data/tokenizer.h"

namespace normlab {

// bpe:N over `text`: the cached model in `cache_dir` when one of this N, text and training recipe
// loads, else trained now (one thread, deterministic) and cached (a cache that cannot be written only
// means it is trained again next time; an empty cache_dir caches nothing).
std::unique_ptr<Tokenizer> trained_bpe_tokenizer(int pieces, std::string_view text,
                                                 const std::string& text_name, const std::string& cache_dir);

// A SentencePiece .model file (BPE or unigram).
std::unique_ptr<Tokenizer> sentencepiece_file_tokenizer(const std::string& path);

// The file name bpe:N over `text` is cached under: bpe-N-<text hash>-<recipe hash>.model.
std::string bpe_cache_name(int pieces, std::string_view text);

}  // namespace normlab
