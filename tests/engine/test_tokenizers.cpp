// Tests of the text task's tokenizers (engine/data/tokenizer.h, data.tokenizer): the setting's forms and
// refusals, exact round trips, deterministic BPE training, the cache (reuse, a corrupt entry replaced),
// .model files, the task built on them, and the run folder's tokenizer.model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/config/config.h"
#include "engine/config/presets.h"
#include "engine/config/tokenizer_spec.h"
#include "engine/core/errors.h"
#include "engine/core/fnv1a.h"
#include "engine/data/sentencepiece_tokenizer.h"
#include "engine/data/task.h"
#include "engine/data/tokenizer.h"
#include "engine/io/provenance.h"
#include "engine/io/run_folder.h"
#include "engine/train/trainer.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

const std::string& corpus() {
    static const std::string text = read_bytes(default_corpus_path());
    return text;
}

std::string message_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const InputError& error) {
        return error.what();
    }
    return "(no InputError)";
}

TEST(TokenizerSetting, ParsesTheThreeForms) {
    EXPECT_EQ(parse_tokenizer("bytes").kind, TokenizerSpec::Kind::Bytes);
    const TokenizerSpec bpe = parse_tokenizer("bpe:1024");
    EXPECT_EQ(bpe.kind, TokenizerSpec::Kind::Bpe);
    EXPECT_EQ(bpe.pieces, 1024);
    const TokenizerSpec file = parse_tokenizer("llama/tokenizer.model");
    EXPECT_EQ(file.kind, TokenizerSpec::Kind::File);
    EXPECT_EQ(file.path, "llama/tokenizer.model");
}

TEST(TokenizerSetting, RefusesMalformedOnesByName) {
    for (const std::string bad : {"", "bpe", "bpe:", "bpe:abc", "bpe:12x", "bpe:-5"}) {
        const std::string message = message_of([&] { parse_tokenizer(bad); });
        EXPECT_NE(message.find("data.tokenizer"), std::string::npos) << bad << ": " << message;
        EXPECT_NE(message.find("bpe:"), std::string::npos) << bad << ": " << message;
    }
    EXPECT_NE(message_of([] { parse_tokenizer("bpe:100"); }).find("260 to"), std::string::npos);
    EXPECT_NE(message_of([] { parse_tokenizer("bpe:65537"); }).find("260 to 65536 pieces"),
              std::string::npos);
    EXPECT_EQ(parse_tokenizer("bpe:65536").pieces, 65536);
}

TEST(TokenizerSetting, IsCheckedWithTheConfigAndIgnoredBySyntheticTasks) {
    Config config;
    apply_override(config, "data.tokenizer=bpe:300");
    EXPECT_EQ(config.data.tokenizer, "bpe:300");
    EXPECT_NO_THROW(validate(config));
    config.data.tokenizer = "bpe:x";
    EXPECT_NE(message_of([&] { validate(config); }).find("data.tokenizer"), std::string::npos);
    config.data.task = TaskKind::Copy;
    config.data.tokenizer = "bpe:512";
    EXPECT_FALSE(task_data_can_fail(config.data));
    const auto task = make_task(config.data, 16, 1);
    EXPECT_EQ(task->tokenizer(), nullptr);
    EXPECT_EQ(task->vocab_size(), config.data.symbols + 2);
}

TEST(ByteTokenizer, IsTheIdentityOnBytes) {
    const auto tokenizer = make_byte_tokenizer();
    const std::string text = "naïve — ü\n\t\x01";
    const std::vector<int32_t> tokens = tokenizer->encode(text);
    ASSERT_EQ(tokens.size(), text.size());
    EXPECT_EQ(tokens[2], 0xC3);
    EXPECT_EQ(tokenizer->decode(tokens), text);
    EXPECT_EQ(tokenizer->vocab_size(), 256);
    EXPECT_TRUE(tokenizer->model_proto().empty());
}

TEST(BpeTokenizer, TrainsTheVocabularyAskedForAndRoundTripsExactly) {
    const auto tokenizer = trained_bpe_tokenizer(1024, corpus(), "the corpus", "");
    EXPECT_EQ(tokenizer->vocab_size(), 1024);
    EXPECT_EQ(tokenizer->description(), "bpe:1024");
    const std::vector<int32_t> tokens = tokenizer->encode(corpus());
    EXPECT_EQ(tokenizer->decode(tokens), corpus());
    // The corpus is English prose: a 1024-piece BPE packs it at least 3 bytes per token (3.5 measured).
    EXPECT_GT(static_cast<double>(corpus().size()) / static_cast<double>(tokens.size()), 3.0);
    for (const int32_t token : tokens) ASSERT_TRUE(token >= 0 && token < 1024) << token;
    // Text it never saw, characters outside it among them, falls back to bytes and still round-trips.
    const std::string unseen = "Zürich → 東京\n\n  two  spaces\r\nend";
    EXPECT_EQ(tokenizer->decode(tokenizer->encode(unseen)), unseen);
}

TEST(BpeTokenizer, TrainingIsDeterministic) {
    const auto first = trained_bpe_tokenizer(512, corpus(), "the corpus", "");
    const auto second = trained_bpe_tokenizer(512, corpus(), "the corpus", "");
    EXPECT_EQ(first->model_proto(), second->model_proto());
    const auto other = trained_bpe_tokenizer(600, corpus(), "the corpus", "");
    EXPECT_NE(first->model_proto(), other->model_proto());
}

TEST(BpeTokenizer, LongTextsEncodeInChunksAsInOneCall) {
    const auto tokenizer = trained_bpe_tokenizer(512, corpus(), "the corpus", "");
    std::string long_text;
    while (long_text.size() < (3u << 20)) long_text += corpus();  // three 1 MiB chunks and a tail
    const std::vector<int32_t> tokens = tokenizer->encode(long_text);
    std::vector<int32_t> joined;
    for (std::size_t copy = 0; copy < long_text.size() / corpus().size(); ++copy) {
        const std::vector<int32_t> part = tokenizer->encode(corpus());
        joined.insert(joined.end(), part.begin(), part.end());
    }
    // The corpus ends with a newline, so its copies tokenize independently.
    ASSERT_EQ(corpus().back(), '\n');
    EXPECT_EQ(tokens, joined);
}

TEST(BpeTokenizer, ANumberOfPiecesTheTextCannotHoldIsRefusedWithTheLimit) {
    const std::string message =
        message_of([] { trained_bpe_tokenizer(100000, corpus(), "'corpus.txt'", ""); });
    EXPECT_NE(message.find("data.tokenizer = bpe:100000"), std::string::npos) << message;
    EXPECT_NE(message.find("corpus.txt"), std::string::npos) << message;
    // SentencePiece's limits, in NormLab's words: at most the merges the text supports, at least its
    // characters, the bytes and the specials.
    EXPECT_NE(message.find("holds at most 3054 pieces"), std::string::npos) << message;
    const std::string small = message_of([] { trained_bpe_tokenizer(270, corpus(), "'corpus.txt'", ""); });
    EXPECT_NE(small.find("needs at least 325 pieces"), std::string::npos) << small;
}

TEST(BpeTokenizer, TheCacheIsReusedAndACorruptEntryReplaced) {
    const testing::TestFolder cache;
    const auto trained = trained_bpe_tokenizer(400, corpus(), "the corpus", cache.dir.string());
    const std::string file = cache / bpe_cache_name(400, corpus());
    ASSERT_TRUE(fs::exists(file));
    EXPECT_EQ(read_bytes(file), trained->model_proto());
    // A cached model is loaded, not trained again: plant another valid model under the name.
    const auto other = trained_bpe_tokenizer(400, corpus().substr(0, corpus().size() / 2), "half", "");
    write_bytes(file, other->model_proto());
    EXPECT_EQ(trained_bpe_tokenizer(400, corpus(), "the corpus", cache.dir.string())->model_proto(),
              other->model_proto());
    // Garbage, or a model of another size, is trained again and replaced.
    write_bytes(file, "not a model");
    EXPECT_EQ(trained_bpe_tokenizer(400, corpus(), "the corpus", cache.dir.string())->model_proto(),
              trained->model_proto());
    EXPECT_EQ(read_bytes(file), trained->model_proto());
    // Another text is another entry.
    EXPECT_NE(bpe_cache_name(400, corpus()), bpe_cache_name(400, corpus().substr(1)));
}

TEST(SentencePieceFile, LoadsAModelAndRefusesWhatIsNotOne) {
    const testing::TestFolder folder;
    const auto trained = trained_bpe_tokenizer(512, corpus(), "the corpus", "");
    write_bytes(folder / "m.model", trained->model_proto());
    const auto loaded = make_tokenizer(folder / "m.model", "", "");
    EXPECT_EQ(loaded->vocab_size(), 512);
    EXPECT_EQ(loaded->encode(corpus()), trained->encode(corpus()));

    EXPECT_NE(message_of([&] { make_tokenizer(folder / "missing.model", "", ""); }).find("does not exist"),
              std::string::npos);
    EXPECT_NE(message_of([&] { make_tokenizer(folder.dir.string(), "", ""); }).find("is a directory"),
              std::string::npos);
    write_bytes(folder / "tokenizer.json", "{\"model\": {\"type\": \"BPE\"}}");
    EXPECT_NE(message_of([&] { make_tokenizer(folder / "tokenizer.json", "", ""); }).find("tokenizer.json"),
              std::string::npos);
    write_bytes(folder / "junk.model", std::string(1000, '\x07'));
    const std::string junk = message_of([&] { make_tokenizer(folder / "junk.model", "", ""); });
    EXPECT_NE(junk.find("is not a SentencePiece model"), std::string::npos) << junk;
    EXPECT_NE(junk.find("data.tokenizer"), std::string::npos) << junk;
}

DataConfig bpe_data(const std::string& setting) {
    DataConfig data;
    data.tokenizer = setting;
    return data;
}

TEST(TokenizedTextTask, BatchesAreTokensOfTheVocabularyAndReproducible) {
    const testing::TestFolder cache;
    ::setenv("XDG_CACHE_HOME", cache.dir.string().c_str(), 1);
    const auto task = make_task(bpe_data("bpe:512"), 32, 7);
    ASSERT_NE(task->tokenizer(), nullptr);
    EXPECT_EQ(task->vocab_size(), 512);
    EXPECT_FALSE(fs::is_empty(cache / "normlab/tokenizers"));  // trained once, cached for the next run
    Batch first, again, validation;
    task->make_batch(Split::Train, 3, 4, 32, first);
    make_task(bpe_data("bpe:512"), 32, 7)->make_batch(Split::Train, 3, 4, 32, again);
    EXPECT_EQ(first.inputs, again.inputs);
    std::set<int32_t> seen(first.inputs.begin(), first.inputs.end());
    EXPECT_GE(*seen.begin(), 0);
    EXPECT_LT(*seen.rbegin(), 512);
    EXPECT_GT(*seen.rbegin(), 258);  // merged pieces, not only bytes
    // Each row's target is its input shifted by one token.
    for (int t = 0; t + 1 < 32; ++t) EXPECT_EQ(first.targets[t], first.inputs[t + 1]);
    // Validation windows decode to text from the corpus's tail.
    task->make_batch(Split::Validation, 0, 1, 32, validation);
    const std::string text = task->tokenizer()->decode(validation.inputs);
    EXPECT_NE(corpus().find(text), std::string::npos) << text;
    EXPECT_GT(corpus().find(text), corpus().size() * 8 / 10);
    ::unsetenv("XDG_CACHE_HOME");
}

TEST(TokenizedTextTask, AShortSplitIsRefusedInTokens) {
    const testing::TestFolder folder;
    write_bytes(folder / "short.txt", corpus().substr(0, 20000));
    DataConfig data = bpe_data("bpe:400");
    data.text_path = folder / "short.txt";
    const std::string message = message_of([&] { make_task(data, 2048, 1); });
    EXPECT_NE(message.find("validation split"), std::string::npos) << message;
    EXPECT_NE(message.find("tokens with data.tokenizer = bpe:400"), std::string::npos) << message;
    EXPECT_NO_THROW(make_task(data, 256, 1));
}

TEST(TokenizedTextTask, ARunTrainsAndKeepsItsTokenizerInTheFolder) {
    const testing::TestFolder folder;
    ::setenv("XDG_CACHE_HOME", (folder / "cache").c_str(), 1);
    Config config = preset_config("quickstart");
    config.data.tokenizer = "bpe:512";
    config.train.steps = 30;
    config.threads = 1;
    Trainer trainer(config);
    EXPECT_EQ(trainer.task().vocab_size(), 512);
    RunFolder run(folder / "run", trainer.config(), false);
    write_run_provenance(run, trainer, provenance_json(trainer, std::nullopt));
    const std::string kept = read_bytes(run.tokenizer_path());
    EXPECT_EQ(kept, trainer.task().tokenizer()->model_proto());
    const nlohmann::json provenance = nlohmann::json::parse(read_bytes(folder / "run/provenance.json"));
    EXPECT_EQ(provenance["tokenizer"]["setting"], "bpe:512");
    EXPECT_EQ(provenance["tokenizer"]["vocab_size"], 512);
    EXPECT_EQ(provenance["tokenizer"]["fnv1a64"], fnv1a64_hex(kept));
    double first = 0, last = 0;
    for (int step = 1; step <= 30; ++step) {
        const double loss = trainer.step().record.loss;
        if (step == 1) first = loss;
        last = loss;
    }
    // From about ln 512 = 6.24 at initialisation to well below it: the model learns the tokens.
    EXPECT_NEAR(first, std::log(512.0), 0.5);
    EXPECT_LT(last, first - 1.0);
    // The kept file reproduces the run's tokens as a data.tokenizer path.
    Config from_file = config;
    from_file.data.tokenizer = run.tokenizer_path();
    Trainer again(from_file);
    Batch a, b;
    trainer.task().make_batch(Split::Train, 5, 2, 16, a);
    again.task().make_batch(Split::Train, 5, 2, 16, b);
    EXPECT_EQ(a.inputs, b.inputs);
    ::unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace normlab
