// The text task's tokenizers (data.tokenizer, docs/model.md#tokenizers): bytes (a token per byte), a
// SentencePiece BPE model trained on the text's training split (bpe:N, cached in the user's cache
// folder), or a SentencePiece .model file. Encoding is a pure function of the model and the text.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace normlab {

class Tokenizer {
  public:
    virtual ~Tokenizer() = default;
    virtual int vocab_size() const = 0;
    // The tokens of `text`, in order.
    virtual std::vector<int32_t> encode(std::string_view text) const = 0;
    // The text of `tokens` (bytes: the bytes; SentencePiece: its detokenization, exact for bpe:N).
    virtual std::string decode(const std::vector<int32_t>& tokens) const = 0;
    // What it is, for captions and errors: "bytes", "bpe:1024", "SentencePiece model 'x.model'".
    virtual std::string description() const = 0;
    // The serialized SentencePiece model, what a run folder keeps as tokenizer.model; empty for bytes.
    virtual const std::string& model_proto() const = 0;
};

std::unique_ptr<Tokenizer> make_byte_tokenizer();

// The tokenizer data.tokenizer names. `training_text` is what bpe:N learns from (the text's training
// split; `text_name` names it in errors); a cached model of the same N and text is reused. Throws
// InputError with the key and what to change (a malformed setting, a missing or foreign .model file,
// an N the text cannot support).
std::unique_ptr<Tokenizer> make_tokenizer(const std::string& setting, std::string_view training_text,
                                          const std::string& text_name);

// Where bpe:N models are cached: <normlab_cache_dir()>/tokenizers; empty when there is no cache folder.
std::string tokenizer_cache_dir();

}  // namespace normlab
