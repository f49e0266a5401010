// What data.tokenizer names (docs/model.md#tokenizers): "bytes" (a token per byte, vocabulary 256),
// "bpe:N" (a SentencePiece BPE model of N pieces trained on the text's training split and cached), or
// the path of a SentencePiece .model file (a Llama 2 or T5 tokenizer, or one a run folder kept).
#pragma once
#include <string>

namespace normlab {

struct TokenizerSpec {
    enum class Kind { Bytes, Bpe, File };
    Kind kind = Kind::Bytes;
    int pieces = 0;    // Bpe: the vocabulary to train
    std::string path;  // File: the .model file
};

// The smallest and largest N of "bpe:N": 256 byte pieces and the three specials (unk, bos, eos) come
// first, so fewer than 260 leaves no room for a merge; 65536 is as large as BPE vocabularies trained
// from one text get (a .model file may hold more, up to model.vocab_size's limit).
constexpr int kMinBpePieces = 260;
constexpr int kMaxBpePieces = 65536;

// Parses data.tokenizer; throws InputError naming the key and what to write for anything else ("bpe",
// "bpe:x", "bpe:100", an empty text). A path is not opened here.
TokenizerSpec parse_tokenizer(const std::string& text);

}  // namespace normlab
