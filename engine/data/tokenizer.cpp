// The byte tokenizer, and make_tokenizer's dispatch on the parsed data.tokenizer.
#include "engine/data/tokenizer.h"

#include <filesystem>

#include "engine/config/tokenizer_spec.h"
#include "engine/core/cache_dir.h"
#include "engine/data/sentencepiece_tokenizer.h"

namespace normlab {

namespace {

class ByteTokenizer final : public Tokenizer {
  public:
    int vocab_size() const override { return 256; }
    std::vector<int32_t> encode(std::string_view text) const override {
        std::vector<int32_t> tokens(text.size());
        for (std::size_t i = 0; i < text.size(); ++i) tokens[i] = static_cast<uint8_t>(text[i]);
        return tokens;
    }
    std::string decode(const std::vector<int32_t>& tokens) const override {
        std::string text(tokens.size(), '\0');
        for (std::size_t i = 0; i < tokens.size(); ++i) text[i] = static_cast<char>(tokens[i]);
        return text;
    }
    std::string description() const override { return "bytes"; }
    const std::string& model_proto() const override { return m_none; }

  private:
    std::string m_none;
};

}  // namespace

std::unique_ptr<Tokenizer> make_byte_tokenizer() {
    return std::make_unique<ByteTokenizer>();
}

std::string tokenizer_cache_dir() {
    const std::string folder = normlab_cache_dir();
    return folder.empty() ? "" : (std::filesystem::path(folder) / "tokenizers").string();
}

std::unique_ptr<Tokenizer> make_tokenizer(const std::string& setting, std::string_view training_text,
                                          const std::string& text_name) {
    const TokenizerSpec spec = parse_tokenizer(setting);
    switch (spec.kind) {
        case TokenizerSpec::Kind::Bytes:
            return make_byte_tokenizer();
        case TokenizerSpec::Kind::Bpe:
            return trained_bpe_tokenizer(spec.pieces, training_text, text_name, tokenizer_cache_dir());
        case TokenizerSpec::Kind::File:
            return sentencepiece_file_tokenizer(spec.path);
    }
    return make_byte_tokenizer();
}

}  // namespace normlab
