// SentencePiece behind the Tokenizer interface: training bpe:N with one fixed recipe (byte fallback, no
// normalisation, so decode(encode(text)) == text), the cache of trained models, loading .model files,
// and encoding long texts in newline-aligned chunks in parallel (the same tokens as one call for bpe:N,
// whose pieces never hold a newline).
#include "engine/data/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "engine/core/errors.h"
#include "engine/core/fnv1a.h"
#include "engine/data/user_file.h"

namespace normlab {

namespace {

namespace fs = std::filesystem;

const char* kTokenizerHint = "use bytes, bpe:N or the path of a SentencePiece .model file";
constexpr std::size_t kMaxTrainingLine = 16384;  // longer lines are cut into pieces of at most this
constexpr std::size_t kEncodeChunk = 1 << 20;    // bytes per encode call, cut after a newline

// One recipe for every bpe:N; its text is part of the cache key, so changing it retrains.
std::unordered_map<std::string, std::string> bpe_recipe(int pieces) {
    return {{"model_type", "bpe"},
            {"vocab_size", std::to_string(pieces)},
            {"character_coverage", "1.0"},
            {"byte_fallback", "true"},
            {"normalization_rule_name", "identity"},
            {"add_dummy_prefix", "false"},
            {"remove_extra_whitespaces", "false"},
            {"split_digits", "true"},
            {"allow_whitespace_only_pieces", "true"},
            {"num_threads", "1"},
            {"input_sentence_size", "1000000"},
            {"shuffle_input_sentence", "false"},
            {"max_sentence_length", std::to_string(kMaxTrainingLine)}};
}

std::string recipe_text() {
    std::string text;
    for (const auto& [key, value] : bpe_recipe(0))
        if (key != "vocab_size") text += key + "=" + value + ";";
    return text;
}

// The text's lines (empty ones skipped), each cut at UTF-8 boundaries into at most kMaxTrainingLine bytes.
class TrainingLines final : public sentencepiece::SentenceIterator {
  public:
    explicit TrainingLines(std::string_view text) : m_text(text) { Next(); }
    bool done() const override { return m_done; }
    void Next() override {
        while (m_position < m_text.size() && m_text[m_position] == '\n') ++m_position;
        if (m_position >= m_text.size()) {
            m_done = true;
            return;
        }
        std::size_t end = std::min(m_text.find('\n', m_position), m_text.size());
        if (end - m_position > kMaxTrainingLine) {
            end = m_position + kMaxTrainingLine;
            while (end > m_position && (static_cast<unsigned char>(m_text[end]) & 0xC0) == 0x80) --end;
        }
        m_line.assign(m_text.substr(m_position, end - m_position));
        m_position = end;
    }
    const std::string& value() const override { return m_line; }
    sentencepiece::util::Status status() const override { return {}; }

  private:
    std::string_view m_text;
    std::size_t m_position = 0;
    std::string m_line;
    bool m_done = false;
};

class SentencePieceTokenizer final : public Tokenizer {
  public:
    // Throws InputError (`source` in the message) when `proto` is no SentencePiece model.
    SentencePieceTokenizer(std::string proto, std::string description, const std::string& source)
        : m_proto(std::move(proto)), m_description(std::move(description)) {
        const auto status = m_processor.LoadFromSerializedProto(m_proto);
        if (!status.ok())
            throw InputError("data.tokenizer: " + source + " is not a SentencePiece model (" +
                             status.ToString() + "); " + kTokenizerHint);
    }
    int vocab_size() const override { return m_processor.GetPieceSize(); }
    std::vector<int32_t> encode(std::string_view text) const override;
    std::string decode(const std::vector<int32_t>& tokens) const override {
        std::string text;
        const auto status = m_processor.Decode(std::vector<int>(tokens.begin(), tokens.end()), &text);
        if (!status.ok())
            throw InputError("cannot decode tokens with " + m_description + ": " + status.ToString());
        return text;
    }
    std::string description() const override { return m_description; }
    const std::string& model_proto() const override { return m_proto; }

  private:
    std::string m_proto;
    std::string m_description;
    sentencepiece::SentencePieceProcessor m_processor;
};

std::vector<int32_t> SentencePieceTokenizer::encode(std::string_view text) const {
    std::vector<std::string_view> chunks;
    for (std::size_t begin = 0; begin < text.size();) {
        std::size_t end = text.size();
        if (text.size() - begin > kEncodeChunk) {
            const std::size_t newline = text.find('\n', begin + kEncodeChunk);
            end = newline == std::string_view::npos ? text.size() : newline + 1;
        }
        chunks.push_back(text.substr(begin, end - begin));
        begin = end;
    }
    std::vector<std::vector<int>> parts(chunks.size());
    std::atomic<bool> failed{false};
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t i = 0; i < chunks.size(); ++i)
        if (!m_processor.Encode(chunks[i], &parts[i]).ok()) failed = true;
    if (failed) throw InputError("cannot encode the text with " + m_description);
    std::vector<int32_t> tokens;
    for (const std::vector<int>& part : parts) tokens.insert(tokens.end(), part.begin(), part.end());
    return tokens;
}

// A cached model, or nothing when it is missing, unreadable or not this N's.
std::unique_ptr<Tokenizer> cached_bpe(const fs::path& file, int pieces, const std::string& description) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return nullptr;
    std::string proto((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
        auto tokenizer =
            std::make_unique<SentencePieceTokenizer>(std::move(proto), description, file.string());
        if (tokenizer->vocab_size() == pieces) return tokenizer;
    } catch (const InputError&) {
    }
    return nullptr;  // trained again and replaced
}

// Best effort: a temporary file renamed over the name, so a reader never sees half a model.
void store_bpe(const fs::path& file, const std::string& proto) {
    static std::atomic<int> counter{0};
    std::error_code error;
    fs::create_directories(file.parent_path(), error);
    const fs::path temporary =
        file.string() + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".tmp";
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out.write(proto.data(), static_cast<std::streamsize>(proto.size()));
        if (!out.flush()) {
            fs::remove(temporary, error);
            return;
        }
    }
    fs::rename(temporary, file, error);
    if (error) fs::remove(temporary, error);
}

// SentencePiece's refusal in NormLab's words: the two limits a text sets on N, else its own reason.
std::string training_refusal(int pieces, const std::string& text_name, std::string reason) {
    if (const std::size_t bracket = reason.rfind("] "); bracket != std::string::npos)
        reason = reason.substr(bracket + 2);
    const std::string head = "data.tokenizer = bpe:" + std::to_string(pieces) + ": ";
    int limit = 0;
    if (std::sscanf(reason.c_str(), "Vocabulary size is smaller than required_chars. %*d vs %d", &limit) == 1)
        return head + "the training split of " + text_name + " needs at least " + std::to_string(limit) +
               " pieces (a piece for each of its characters, the 256 bytes and 3 specials); use bpe:" +
               std::to_string(limit) + " or more";
    if (std::sscanf(reason.c_str(), "Vocabulary size too high (%*d). Please set it to a value <= %d",
                    &limit) == 1)
        return head + "the training split of " + text_name + " holds at most " + std::to_string(limit) +
               " pieces (every merge it supports); use bpe:" + std::to_string(limit) +
               " or fewer, or a longer text";
    return head + "SentencePiece cannot train on the training split of " + text_name + " (" + reason + "); " +
           kTokenizerHint;
}

std::string train_bpe(int pieces, std::string_view text, const std::string& text_name) {
    TrainingLines lines(text);
    auto recipe = bpe_recipe(pieces);
    recipe["minloglevel"] = "2";  // SentencePiece's progress log stays quiet
    std::string proto;
    const auto status = sentencepiece::SentencePieceTrainer::Train(recipe, &lines, &proto);
    if (!status.ok()) throw InputError(training_refusal(pieces, text_name, status.message()));
    return proto;
}

}  // namespace

std::string bpe_cache_name(int pieces, std::string_view text) {
    return "bpe-" + std::to_string(pieces) + "-" + fnv1a64_hex(text) + "-" +
           fnv1a64_hex(recipe_text()).substr(0, 8) + ".model";
}

std::unique_ptr<Tokenizer> trained_bpe_tokenizer(int pieces, std::string_view text,
                                                 const std::string& text_name, const std::string& cache_dir) {
    const std::string description = "bpe:" + std::to_string(pieces);
    const fs::path file = cache_dir.empty() ? fs::path() : fs::path(cache_dir) / bpe_cache_name(pieces, text);
    if (!cache_dir.empty())
        if (auto cached = cached_bpe(file, pieces, description)) return cached;
    std::string proto = train_bpe(pieces, text, text_name);
    if (!cache_dir.empty()) store_bpe(file, proto);
    return std::make_unique<SentencePieceTokenizer>(std::move(proto), description, description);
}

std::unique_ptr<Tokenizer> sentencepiece_file_tokenizer(const std::string& path) {
    const UserFileRole role{"data.tokenizer", "SentencePiece model", kTokenizerHint, uintmax_t{256} << 20};
    std::string proto = read_user_file(path, role);
    if (!proto.empty() && proto.front() == '{')
        throw InputError(
            "data.tokenizer: '" + path +
            "' looks like a Hugging Face tokenizer.json; NormLab reads "
            "SentencePiece .model files (tokenizer.model beside a Llama 2, T5 or Gemma checkpoint)");
    return std::make_unique<SentencePieceTokenizer>(std::move(proto), "SentencePiece model '" + path + "'",
                                                    "'" + path + "'");
}

}  // namespace normlab
