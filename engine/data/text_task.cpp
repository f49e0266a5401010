// The "text" task: language modelling over a UTF-8 file, a token per byte or through a SentencePiece
// tokenizer (data.tokenizer). The last val_fraction of the text is the validation split; rows are
// windows at random starts.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/config/tokenizer_spec.h"
#include "engine/data/task_builders.h"
#include "engine/data/tokenizer.h"
#include "engine/data/user_file.h"
#include "engine/data/utf8.h"

namespace normlab {

namespace {

const char* kTextPathHint =
    "point data.text_path at a UTF-8 text file (or leave it empty for the shipped corpus)";

// The whole text is held in memory (and indexed): a file beyond this is refused before reading.
constexpr uintmax_t kMaxTextBytes = uintmax_t{1} << 30;

// Windows at random starts over a token sequence: std::string for bytes (a byte per token, as read),
// std::vector<int32_t> for a SentencePiece tokenizer.
template <typename Tokens>
class TextTask final : public Task {
  public:
    TextTask(std::string path, Tokens tokens, std::size_t train_tokens, std::unique_ptr<Tokenizer> tokenizer,
             uint64_t seed)
        : m_path(std::move(path)),
          m_tokens(std::move(tokens)),
          m_train_tokens(train_tokens),
          m_tokenizer(std::move(tokenizer)),
          m_seed(seed) {}

    std::string name() const override { return "text"; }
    int vocab_size() const override { return m_tokenizer->vocab_size(); }
    bool has_accuracy() const override { return false; }
    const Tokenizer* tokenizer() const override { return m_tokenizer.get(); }

    void make_batch(Split split, uint64_t index, int batch_size, int seq_len, Batch& out) const override {
        check_batch_shape("text", batch_size, seq_len, 1);
        const std::size_t begin = split == Split::Train ? 0 : m_train_tokens;
        const std::size_t end = split == Split::Train ? m_train_tokens : m_tokens.size();
        const auto window = static_cast<std::size_t>(seq_len) + 1;
        if (end - begin < window) {
            throw InputError("text: the " + std::string(split == Split::Train ? "training" : "validation") +
                             " split of '" + m_path + "' has " + std::to_string(end - begin) + " " + unit() +
                             ", fewer than model.seq_len + 1 = " + std::to_string(window) +
                             "; use a longer text or a smaller model.seq_len");
        }
        resize_batch(out, batch_size, seq_len);
        out.source_len = std::max(1, seq_len / 2);  // the first half of the window
        Rng rng(batch_seed(m_seed, split, index));
        const uint64_t starts = end - begin - window + 1;
        for (int row = 0; row < batch_size; ++row) {
            const std::size_t start = begin + static_cast<std::size_t>(below_u64(rng, starts));
            const std::size_t offset = static_cast<std::size_t>(row) * static_cast<std::size_t>(seq_len);
            for (int t = 0; t < seq_len; ++t) {
                out.inputs[offset + t] = token(start + t);
                out.targets[offset + t] = token(start + t + 1);
            }
        }
    }

  private:
    int32_t token(std::size_t i) const {
        if constexpr (std::is_same_v<Tokens, std::string>) {
            return static_cast<uint8_t>(m_tokens[i]);
        } else {
            return m_tokens[i];
        }
    }
    std::string unit() const { return std::is_same_v<Tokens, std::string> ? "bytes" : "tokens"; }

    std::string m_path;
    Tokens m_tokens;
    std::size_t m_train_tokens;
    std::unique_ptr<Tokenizer> m_tokenizer;
    uint64_t m_seed;
};

// The byte-level task: the validation split is the tail, val_fraction of the bytes but never less than
// one window.
std::unique_ptr<Task> byte_task(const std::string& path, std::string bytes, const DataConfig& data,
                                std::size_t window, uint64_t seed) {
    const std::size_t needed = 2 * window;
    if (bytes.size() < needed) {
        throw InputError("data.text_path: text file '" + path + "' has " + std::to_string(bytes.size()) +
                         " bytes, but model.seq_len = " + std::to_string(window - 1) + " needs at least " +
                         std::to_string(needed) + " bytes (" + std::to_string(window) + " for training and " +
                         std::to_string(window) +
                         " for validation); use a longer text or a smaller model.seq_len");
    }
    const auto fraction_bytes =
        static_cast<std::size_t>(static_cast<double>(bytes.size()) * data.val_fraction);
    const std::size_t train_bytes = bytes.size() - std::max(window, fraction_bytes);
    return std::make_unique<TextTask<std::string>>(path, std::move(bytes), train_bytes, make_byte_tokenizer(),
                                                   seed);
}

// A SentencePiece-tokenized task: the bytes split first (the tail val_fraction, cut at a character),
// the tokenizer trained (bpe:N) on the training part alone, then each part encoded.
std::unique_ptr<Task> token_task(const std::string& path, const std::string& bytes, const DataConfig& data,
                                 std::size_t window, uint64_t seed) {
    std::size_t cut =
        bytes.size() - static_cast<std::size_t>(static_cast<double>(bytes.size()) * data.val_fraction);
    while (cut < bytes.size() && (static_cast<unsigned char>(bytes[cut]) & 0xC0) == 0x80) ++cut;
    const std::string_view text(bytes);
    std::unique_ptr<Tokenizer> tokenizer =
        make_tokenizer(data.tokenizer, text.substr(0, cut), "'" + path + "'");
    std::vector<int32_t> tokens = tokenizer->encode(text.substr(0, cut));
    const std::size_t train_tokens = tokens.size();
    const std::vector<int32_t> validation = tokenizer->encode(text.substr(cut));
    tokens.insert(tokens.end(), validation.begin(), validation.end());
    for (const auto& [name, count] :
         {std::pair{"training", train_tokens}, {"validation", validation.size()}}) {
        if (count < window)
            throw InputError("data.text_path: the " + std::string(name) + " split of '" + path + "' is " +
                             std::to_string(count) + " tokens with data.tokenizer = " + data.tokenizer +
                             ", fewer than model.seq_len + 1 = " + std::to_string(window) +
                             "; use a longer text, another data.val_fraction or a smaller model.seq_len");
    }
    return std::make_unique<TextTask<std::vector<int32_t>>>(path, std::move(tokens), train_tokens,
                                                            std::move(tokenizer), seed);
}

}  // namespace

std::unique_ptr<Task> make_text_task(const DataConfig& data, int seq_len, uint64_t seed) {
    if (seq_len < 1) {
        throw InputError("text: model.seq_len = " + std::to_string(seq_len) +
                         " is too short; it must be at least 1");
    }
    const std::string path = data.text_path.empty() ? default_corpus_path() : data.text_path;
    std::string bytes = read_user_file(path, {"data.text_path", "text file", kTextPathHint, kMaxTextBytes});
    const auto window = static_cast<std::size_t>(seq_len) + 1;
    if (bytes.empty()) {
        throw InputError("data.text_path: text file '" + path + "' is empty; it needs at least " +
                         std::to_string(2 * window) +
                         " bytes of UTF-8 text for model.seq_len = " + std::to_string(seq_len));
    }
    if (const auto error = find_utf8_error(bytes)) {
        throw InputError("data.text_path: text file '" + path + "' is not valid UTF-8: " + error->reason +
                         " at byte offset " + std::to_string(error->offset) + "; re-save it as UTF-8");
    }
    if (parse_tokenizer(data.tokenizer).kind == TokenizerSpec::Kind::Bytes)
        return byte_task(path, std::move(bytes), data, window, seed);
    return token_task(path, bytes, data, window, seed);
}

}  // namespace normlab
