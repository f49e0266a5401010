// Tests of the training tasks (engine/data): determinism, disjoint train / validation splits, correct
// answers of the synthetic tasks, the shipped corpus, and every InputError make_task can raise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "engine/core/errors.h"
#include "engine/core/rng.h"
#include "engine/data/task.h"
#include "engine/data/utf8.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {

// A file in a test folder of its own (tests/support/temp_folder.h), removed with it.
class TempFile {
  public:
    explicit TempFile(const std::string& contents) : m_path(m_folder / "text.txt") {
        std::ofstream file(m_path, std::ios::binary);
        file.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    }
    std::string path() const { return m_path; }

  private:
    const testing::TestFolder m_folder;
    const std::string m_path;
};

// Text in which every 17-byte window is (almost surely) unique, so a row can be located in it.
std::string random_letters(std::size_t size, uint64_t seed) {
    Rng rng(seed);
    std::string text(size, ' ');
    for (auto& c : text) c = static_cast<char>('a' + rng.below(26));
    return text;
}

std::string read_file(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

// The task of a config name ("copy"), parsed as the config file and --set parse it.
TaskKind task_named(const std::string& name) {
    Config config;
    apply_override(config, "data.task=" + name);
    return config.data.task;
}

DataConfig text_config(const std::string& path, double val_fraction = 0.1) {
    DataConfig data;
    data.task = TaskKind::Text;
    data.text_path = path;
    data.val_fraction = val_fraction;
    return data;
}

DataConfig synthetic_config(const std::string& task, int symbols = 16, int modulus = 97,
                            double val_fraction = 0.1) {
    DataConfig data;
    data.task = task_named(task);
    data.symbols = symbols;
    data.modulus = modulus;
    data.val_fraction = val_fraction;
    return data;
}

// Runs `action`, which must throw InputError whose message contains every one of `parts`.
void expect_input_error(const std::function<void()>& action, const std::vector<std::string>& parts) {
    try {
        action();
        ADD_FAILURE() << "expected an InputError";
    } catch (const InputError& error) {
        const std::string message = error.what();
        for (const auto& part : parts) {
            EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' missing from: " << message;
        }
    }
}

Batch batch_of(const Task& task, Split split, uint64_t index, int batch_size, int seq_len) {
    Batch batch;
    task.make_batch(split, index, batch_size, seq_len, batch);
    return batch;
}

bool same_batch(const Batch& a, const Batch& b) {
    return a.batch == b.batch && a.seq == b.seq && a.inputs == b.inputs && a.targets == b.targets;
}

void expect_ids_in_vocab(const Task& task, const Batch& batch) {
    ASSERT_EQ(batch.inputs.size(), static_cast<std::size_t>(batch.batch) * batch.seq);
    ASSERT_EQ(batch.targets.size(), batch.inputs.size());
    for (std::size_t i = 0; i < batch.inputs.size(); ++i) {
        EXPECT_GE(batch.inputs[i], 0);
        EXPECT_LT(batch.inputs[i], task.vocab_size());
        EXPECT_GE(batch.targets[i], -1);
        EXPECT_LT(batch.targets[i], task.vocab_size());
    }
}

// The content x of each row of a copy / reverse / sort batch, n = (seq - 1) / 2 symbols.
std::vector<std::vector<int32_t>> sequence_contents(const Batch& batch) {
    const int n = (batch.seq - 1) / 2;
    std::vector<std::vector<int32_t>> rows;
    for (int row = 0; row < batch.batch; ++row) {
        const auto begin = batch.inputs.begin() + static_cast<std::ptrdiff_t>(row) * batch.seq;
        rows.emplace_back(begin, begin + n);
    }
    return rows;
}

// ---- factory ------------------------------------------------------------------------------------

TEST(TaskFactory, UnknownTaskListsTheValidOnes) {
    Config config;
    expect_input_error([&] { apply_override(config, "data.task=translate"); },
                       {"translate", "text", "copy", "reverse", "sort", "modadd"});
}

TEST(TaskFactory, RejectsValFractionOutsideZeroToHalf) {
    for (const double fraction : {0.0, -0.1, 0.51, 1.0, std::numeric_limits<double>::quiet_NaN()}) {
        expect_input_error([&] { make_task(synthetic_config("copy", 16, 97, fraction), 16, 1); },
                           {"data.val_fraction", "(0, 0.5]"});
    }
    EXPECT_NO_THROW(make_task(synthetic_config("copy", 16, 97, 0.5), 16, 1));
}

TEST(TaskFactory, MessagesQuoteTheRejectedValueExactly) {
    // The data tasks share the engine's one format_number (shortest round trip): a value just above
    // the bound is shown as it is, not rounded to the bound itself ("0.5 is out of range").
    expect_input_error([&] { make_task(synthetic_config("copy", 16, 97, 0.50000001), 16, 1); },
                       {"data.val_fraction = 0.50000001 is out of range"});
}

TEST(TaskFactory, DefaultCorpusPathPointsAtTheShippedCorpus) {
    const std::string path = default_corpus_path();
    EXPECT_EQ(std::filesystem::path(path).filename(), "corpus.txt");
    EXPECT_TRUE(std::filesystem::exists(path)) << path;
}

// ---- UTF-8 ------------------------------------------------------------------------------------------

TEST(TaskUtf8, AcceptsWellFormedText) {
    EXPECT_FALSE(find_utf8_error(""));
    EXPECT_FALSE(find_utf8_error("plain ASCII\n"));
    EXPECT_FALSE(find_utf8_error("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xEF\xBB\xBF"));
    EXPECT_FALSE(find_utf8_error("\xED\x9F\xBF \xEE\x80\x80 \xF4\x8F\xBF\xBF"));  // U+D7FF, U+E000, U+10FFFF
}

TEST(TaskUtf8, ReportsTheOffsetAndKindOfEachBreakage) {
    struct Case {
        std::string text;
        std::size_t offset;
        std::string reason;
    };
    const std::vector<Case> cases = {
        {"ab\x80", 2, "continuation"},         {"abc\xC0\xAF", 3, "overlong"},
        {"\xC1\xBF", 0, "overlong"},           {"x\xE0\x80\xAF", 1, "overlong"},
        {"xy\xF0\x8F\xBF\xBF", 2, "overlong"}, {"ok \xED\xA0\x80", 3, "surrogate"},
        {"\xF4\x90\x80\x80", 0, "U+10FFFF"},   {"\xF5\x80\x80\x80", 0, "invalid byte"},
        {"\xFF", 0, "invalid byte"},           {"ab\xE2\x82", 2, "truncated"},
        {"ab\xE2\x82z", 2, "truncated"},       {"\xC3(", 0, "truncated"},
    };
    for (const auto& c : cases) {
        const auto error = find_utf8_error(c.text);
        ASSERT_TRUE(error) << c.reason;
        EXPECT_EQ(error->offset, c.offset) << c.reason;
        EXPECT_NE(error->reason.find(c.reason), std::string::npos) << error->reason;
    }
}

// ---- text -------------------------------------------------------------------------------------------

TEST(TaskText, DefaultCorpusLoads) {
    const auto task = make_task(text_config(""), 64, 1);
    EXPECT_EQ(task->name(), "text");
    EXPECT_EQ(task->vocab_size(), 256);
    EXPECT_FALSE(task->has_accuracy());
    const std::string corpus = read_file(default_corpus_path());
    EXPECT_GE(corpus.size(), 40000u);
    EXPECT_FALSE(find_utf8_error(corpus));
    const Batch batch = batch_of(*task, Split::Train, 0, 8, 64);
    expect_ids_in_vocab(*task, batch);
}

TEST(TaskText, BatchesAreDeterministicAndIndependentOfCallOrder) {
    const auto task = make_task(text_config(""), 32, 7);
    const Batch first = batch_of(*task, Split::Train, 5, 4, 32);
    batch_of(*task, Split::Validation, 2, 4, 32);
    batch_of(*task, Split::Train, 6, 4, 32);
    EXPECT_TRUE(same_batch(first, batch_of(*task, Split::Train, 5, 4, 32)));
    EXPECT_TRUE(same_batch(first, batch_of(*make_task(text_config(""), 32, 7), Split::Train, 5, 4, 32)));
    EXPECT_FALSE(same_batch(first, batch_of(*task, Split::Train, 6, 4, 32)));
    EXPECT_FALSE(same_batch(first, batch_of(*task, Split::Validation, 5, 4, 32)));
    EXPECT_FALSE(same_batch(first, batch_of(*make_task(text_config(""), 32, 8), Split::Train, 5, 4, 32)));
}

TEST(TaskText, TargetsAreInputsShiftedByOne) {
    const std::string text = random_letters(5000, 11);
    TempFile file(text);
    const auto task = make_task(text_config(file.path()), 16, 3);
    const Batch batch = batch_of(*task, Split::Train, 0, 16, 16);
    ASSERT_EQ(batch.batch, 16);
    ASSERT_EQ(batch.seq, 16);
    for (int row = 0; row < batch.batch; ++row) {
        std::string window;
        for (int t = 0; t < batch.seq; ++t) {
            const std::size_t i = static_cast<std::size_t>(row * batch.seq + t);
            if (t + 1 < batch.seq) {
                EXPECT_EQ(batch.targets[i], batch.inputs[i + 1]);
            }
            window.push_back(static_cast<char>(batch.inputs[i]));
        }
        window.push_back(static_cast<char>(batch.targets[static_cast<std::size_t>(row * batch.seq + 15)]));
        EXPECT_NE(text.find(window), std::string::npos) << "row " << row << " is not a window of the text";
    }
}

TEST(TaskText, TrainAndValidationWindowsDoNotOverlap) {
    const std::string text = random_letters(4000, 12);
    TempFile file(text);
    const int seq_len = 16;
    const double fraction = 0.2;
    const std::size_t boundary = text.size() - static_cast<std::size_t>(text.size() * fraction);
    const auto task = make_task(text_config(file.path(), fraction), seq_len, 5);
    std::size_t min_validation_start = text.size();
    std::size_t max_train_end = 0;
    for (uint64_t index = 0; index < 50; ++index) {
        for (const Split split : {Split::Train, Split::Validation}) {
            const Batch batch = batch_of(*task, split, index, 8, seq_len);
            for (int row = 0; row < batch.batch; ++row) {
                std::string window;
                for (int t = 0; t < seq_len; ++t)
                    window.push_back(static_cast<char>(batch.inputs[row * seq_len + t]));
                window.push_back(static_cast<char>(batch.targets[row * seq_len + seq_len - 1]));
                const std::size_t start = text.find(window);
                ASSERT_NE(start, std::string::npos);
                ASSERT_EQ(text.find(window, start + 1), std::string::npos)
                    << "window not unique; pick another seed";
                if (split == Split::Train) {
                    max_train_end = std::max(max_train_end, start + seq_len + 1);
                } else {
                    min_validation_start = std::min(min_validation_start, start);
                }
            }
        }
    }
    EXPECT_LE(max_train_end, boundary);
    EXPECT_GE(min_validation_start, boundary);
    // 400 draws over ~3184 train starts and ~785 validation starts reach both ends of the range.
    EXPECT_GT(max_train_end, boundary - 200);
    EXPECT_LT(min_validation_start, boundary + 200);
}

TEST(TaskText, ValidationSplitHoldsAtLeastOneWindow) {
    // 1% of 1000 bytes is 10 bytes, less than seq_len + 1 = 17: the split is the last 17 bytes.
    const std::string text = random_letters(1000, 13);
    TempFile file(text);
    const auto task = make_task(text_config(file.path(), 0.01), 16, 1);
    const Batch batch = batch_of(*task, Split::Validation, 3, 4, 16);
    for (int row = 0; row < batch.batch; ++row) {
        for (int t = 0; t < 16; ++t) {
            EXPECT_EQ(batch.inputs[row * 16 + t], static_cast<uint8_t>(text[983 + t]));
            EXPECT_EQ(batch.targets[row * 16 + t], static_cast<uint8_t>(text[984 + t]));
        }
    }
    // The smallest text that works: one window per split.
    TempFile smallest(random_letters(34, 14));
    EXPECT_NO_THROW(make_task(text_config(smallest.path()), 16, 1));
}

TEST(TaskText, NonAsciiBytesAreTokenIds) {
    std::string text;
    for (int i = 0; i < 40; ++i) text += "\xC3\xA9t\xC3\xA9 ";  // "été "
    TempFile file(text);
    const auto task = make_task(text_config(file.path()), 8, 1);
    const Batch batch = batch_of(*task, Split::Train, 0, 4, 8);
    EXPECT_NE(std::find(batch.inputs.begin(), batch.inputs.end(), 0xC3), batch.inputs.end());
    expect_ids_in_vocab(*task, batch);
}

TEST(TaskText, MissingFileIsAnInputError) {
    const testing::TestFolder folder;
    const std::string path = folder / "no_such_file.txt";
    expect_input_error([&] { make_task(text_config(path), 16, 1); },
                       {path, "does not exist", "data.text_path"});
}

TEST(TaskText, DirectoryIsAnInputError) {
    const testing::TestFolder folder;
    const std::string path = folder.dir.string();
    expect_input_error([&] { make_task(text_config(path), 16, 1); }, {path, "directory"});
}

TEST(TaskText, DeviceIsNotARegularFile) {
    // /dev/null would read as an empty text (and /dev/zero would never end): refused by kind.
    expect_input_error([&] { make_task(text_config("/dev/null"), 16, 1); },
                       {"/dev/null", "not a regular file", "data.text_path"});
}

TEST(TaskText, EmptyFileIsAnInputError) {
    TempFile file("");
    expect_input_error([&] { make_task(text_config(file.path()), 16, 1); },
                       {file.path(), "empty", "34 bytes"});
}

TEST(TaskText, InvalidUtf8NamesTheByteOffset) {
    std::string text = random_letters(500, 15);
    text[123] = '\xC0';  // overlong lead byte
    TempFile file(text);
    expect_input_error([&] { make_task(text_config(file.path()), 16, 1); },
                       {file.path(), "not valid UTF-8", "byte offset 123", "overlong"});

    TempFile truncated(random_letters(300, 16) + "\xE2\x82");
    expect_input_error([&] { make_task(text_config(truncated.path()), 16, 1); },
                       {"byte offset 300", "truncated"});

    TempFile surrogate(random_letters(50, 17) + "\xED\xB0\x80" + random_letters(50, 18));
    expect_input_error([&] { make_task(text_config(surrogate.path()), 16, 1); },
                       {"byte offset 50", "surrogate"});
}

TEST(TaskText, TooShortTextSaysHowManyBytesAreNeeded) {
    TempFile file(random_letters(33, 19));
    expect_input_error([&] { make_task(text_config(file.path()), 16, 1); },
                       {file.path(), "33 bytes", "at least 34 bytes", "model.seq_len"});
}

TEST(TaskText, BadSizesAreInputErrors) {
    expect_input_error([&] { make_task(text_config(""), 0, 1); }, {"model.seq_len", "at least 1"});
    const auto task = make_task(text_config(""), 16, 1);
    Batch batch;
    expect_input_error([&] { task->make_batch(Split::Train, 0, 0, 16, batch); }, {"batch_size"});
}

// ---- copy / reverse / sort ------------------------------------------------------------------------

void check_sequence_rows(const Task& task, const Batch& batch, int symbols) {
    const int n = (batch.seq - 1) / 2;
    const int sep = symbols;
    const int pad = symbols + 1;
    expect_ids_in_vocab(task, batch);
    for (int row = 0; row < batch.batch; ++row) {
        const int32_t* in = batch.inputs.data() + static_cast<std::ptrdiff_t>(row) * batch.seq;
        const int32_t* tg = batch.targets.data() + static_cast<std::ptrdiff_t>(row) * batch.seq;
        std::vector<int32_t> x(in, in + n);
        for (const int32_t symbol : x) ASSERT_LT(symbol, symbols);
        std::vector<int32_t> expected = x;
        if (task.name() == "reverse") std::reverse(expected.begin(), expected.end());
        if (task.name() == "sort") std::sort(expected.begin(), expected.end());
        EXPECT_EQ(in[n], sep);
        int scored = 0;
        std::vector<int32_t> answer;
        for (int t = 0; t < batch.seq; ++t) {
            if (tg[t] != -1) {
                ++scored;
                answer.push_back(tg[t]);
                EXPECT_TRUE(t >= n && t < 2 * n) << "scored position " << t;
            }
            if (t > n && t <= 2 * n) {
                EXPECT_EQ(in[t], expected[static_cast<std::size_t>(t - n - 1)]);
            }
            if (t > 2 * n) {
                EXPECT_EQ(in[t], pad);
            }
        }
        EXPECT_EQ(scored, n);
        EXPECT_EQ(answer, expected);
    }
}

TEST(TaskSequence, VocabularyAndNames) {
    for (const std::string name : {"copy", "reverse", "sort"}) {
        const auto task = make_task(synthetic_config(name, 10), 17, 1);
        EXPECT_EQ(task->name(), name);
        EXPECT_EQ(task->vocab_size(), 12);
        EXPECT_TRUE(task->has_accuracy());
    }
}

TEST(TaskSequence, AnswersAreCorrectForOddAndEvenLengths) {
    for (const std::string name : {"copy", "reverse", "sort"}) {
        for (const int seq_len : {5, 6, 17, 32}) {
            SCOPED_TRACE(name + " seq_len " + std::to_string(seq_len));
            const auto task = make_task(synthetic_config(name, 7), seq_len, 3);
            for (const Split split : {Split::Train, Split::Validation}) {
                const Batch batch = batch_of(*task, split, 4, 16, seq_len);
                ASSERT_EQ(batch.batch, 16);
                ASSERT_EQ(batch.seq, seq_len);
                check_sequence_rows(*task, batch, 7);
            }
        }
    }
}

TEST(TaskSequence, CopyScoresExactlyNPositionsPerRow) {
    const auto task = make_task(synthetic_config("copy", 16), 32, 9);
    const Batch batch = batch_of(*task, Split::Train, 0, 32, 32);
    for (int row = 0; row < batch.batch; ++row) {
        const auto begin = batch.targets.begin() + row * batch.seq;
        EXPECT_EQ(std::count_if(begin, begin + batch.seq, [](int32_t t) { return t != -1; }), 15);
    }
}

TEST(TaskSequence, BatchesAreDeterministic) {
    for (const std::string name : {"copy", "reverse", "sort"}) {
        const auto task = make_task(synthetic_config(name), 21, 4);
        const Batch first = batch_of(*task, Split::Validation, 9, 8, 21);
        batch_of(*task, Split::Validation, 10, 8, 21);
        EXPECT_TRUE(same_batch(first, batch_of(*task, Split::Validation, 9, 8, 21)));
        EXPECT_TRUE(same_batch(
            first, batch_of(*make_task(synthetic_config(name), 21, 4), Split::Validation, 9, 8, 21)));
        EXPECT_FALSE(same_batch(first, batch_of(*task, Split::Validation, 10, 8, 21)));
        EXPECT_FALSE(same_batch(first, batch_of(*task, Split::Train, 9, 8, 21)));
    }
}

TEST(TaskSequence, SplitsNeverShareASequence) {
    // 3 symbols, n = 4: only 81 sequences, so an unsplit sampler would repeat them across splits.
    for (const std::string name : {"copy", "reverse", "sort"}) {
        const auto task = make_task(synthetic_config(name, 3, 97, 0.3), 9, 2);
        std::set<std::vector<int32_t>> train;
        std::set<std::vector<int32_t>> validation;
        for (uint64_t index = 0; index < 40; ++index) {
            for (const auto& x : sequence_contents(batch_of(*task, Split::Train, index, 16, 9)))
                train.insert(x);
            for (const auto& x : sequence_contents(batch_of(*task, Split::Validation, index, 16, 9))) {
                validation.insert(x);
            }
        }
        EXPECT_GT(train.size(), 30u);
        EXPECT_GT(validation.size(), 5u);
        EXPECT_EQ(train.size() + validation.size(), 81u);  // every sequence reached, each in one split
        for (const auto& x : validation) EXPECT_EQ(train.count(x), 0u);
    }
}

TEST(TaskSequence, BadSizesAreInputErrors) {
    expect_input_error([&] { make_task(synthetic_config("copy"), 4, 1); }, {"model.seq_len", ">= 5"});
    expect_input_error([&] { make_task(synthetic_config("reverse", 1), 16, 1); },
                       {"data.symbols", "at least 2"});
    expect_input_error([&] { make_task(synthetic_config("sort", 0), 16, 1); },
                       {"data.symbols", "at least 2"});
    const auto task = make_task(synthetic_config("copy"), 16, 1);
    Batch batch;
    expect_input_error([&] { task->make_batch(Split::Train, 0, 4, 3, batch); }, {"model.seq_len", ">= 5"});
    expect_input_error([&] { task->make_batch(Split::Train, 0, -1, 16, batch); }, {"batch_size"});
}

TEST(TaskSequence, TooFewSequencesForAValidationSplitIsAnInputError) {
    // 2 symbols and seq_len 5 give 4 sequences; with val_fraction 0.001 none of them is held out.
    expect_input_error([&] { make_task(synthetic_config("copy", 2, 97, 0.001), 5, 1); },
                       {"only 4 distinct sequences", "validation", "data.symbols"});
}

// ---- modadd -------------------------------------------------------------------------------------------

struct ModAddProblem {
    int a;
    int b;
};

// Checks every full problem of every row and returns them.
std::vector<ModAddProblem> check_modadd_rows(const Task& task, const Batch& batch, int p) {
    expect_ids_in_vocab(task, batch);
    std::vector<ModAddProblem> problems;
    for (int row = 0; row < batch.batch; ++row) {
        const int32_t* in = batch.inputs.data() + static_cast<std::ptrdiff_t>(row) * batch.seq;
        const int32_t* tg = batch.targets.data() + static_cast<std::ptrdiff_t>(row) * batch.seq;
        int scored = 0;
        for (int t = 0; t < batch.seq; ++t) {
            const int k = t % 5;
            if (k == 0 || k == 2 || k == 4) {
                EXPECT_LT(in[t], p);
            }
            if (k == 1) {  // '+'
                EXPECT_EQ(in[t], p);
            }
            if (k == 3) {  // '=': its target is the answer
                EXPECT_EQ(in[t], p + 1);
                ++scored;
                EXPECT_EQ(tg[t], (in[t - 3] + in[t - 1]) % p);
                problems.push_back({in[t - 3], in[t - 1]});
                if (t + 1 < batch.seq) {
                    EXPECT_EQ(in[t + 1], tg[t]);
                }
            } else {
                EXPECT_EQ(tg[t], -1) << "position " << t;
            }
        }
        EXPECT_EQ(scored, (batch.seq + 1) / 5);
    }
    return problems;
}

TEST(TaskModAdd, VocabularyAndAnswers) {
    const int p = 13;
    for (const int seq_len : {4, 5, 9, 12, 14, 32}) {
        SCOPED_TRACE("seq_len " + std::to_string(seq_len));
        const auto task = make_task(synthetic_config("modadd", 16, p), seq_len, 6);
        EXPECT_EQ(task->name(), "modadd");
        EXPECT_EQ(task->vocab_size(), p + 2);
        EXPECT_TRUE(task->has_accuracy());
        for (const Split split : {Split::Train, Split::Validation}) {
            const auto problems = check_modadd_rows(*task, batch_of(*task, split, 1, 16, seq_len), p);
            EXPECT_EQ(problems.size(), static_cast<std::size_t>(16 * ((seq_len + 1) / 5)));
        }
    }
}

TEST(TaskModAdd, BatchesAreDeterministic) {
    const auto task = make_task(synthetic_config("modadd"), 24, 12);
    const Batch first = batch_of(*task, Split::Train, 100, 8, 24);
    batch_of(*task, Split::Train, 101, 8, 24);
    EXPECT_TRUE(same_batch(first, batch_of(*task, Split::Train, 100, 8, 24)));
    EXPECT_FALSE(same_batch(first, batch_of(*task, Split::Train, 101, 8, 24)));
    EXPECT_FALSE(same_batch(
        first, batch_of(*make_task(synthetic_config("modadd"), 24, 13), Split::Train, 100, 8, 24)));
}

TEST(TaskModAdd, SplitsNeverShareAPair) {
    const int p = 11;  // 121 pairs
    const auto task = make_task(synthetic_config("modadd", 16, p, 0.25), 24, 3);
    std::set<std::pair<int, int>> train;
    std::set<std::pair<int, int>> validation;
    for (uint64_t index = 0; index < 30; ++index) {
        for (const auto& q : check_modadd_rows(*task, batch_of(*task, Split::Train, index, 8, 24), p)) {
            train.insert({q.a, q.b});
        }
        for (const auto& q : check_modadd_rows(*task, batch_of(*task, Split::Validation, index, 8, 24), p)) {
            validation.insert({q.a, q.b});
        }
    }
    EXPECT_GT(validation.size(), 10u);
    EXPECT_EQ(train.size() + validation.size(), 121u);
    for (const auto& pair : validation) EXPECT_EQ(train.count(pair), 0u);
}

TEST(TaskModAdd, BadSizesAreInputErrors) {
    expect_input_error([&] { make_task(synthetic_config("modadd", 16, 1), 8, 1); },
                       {"data.modulus", "2 to 4096"});
    expect_input_error([&] { make_task(synthetic_config("modadd", 16, 4097), 8, 1); },
                       {"data.modulus", "2 to 4096"});
    expect_input_error([&] { make_task(synthetic_config("modadd"), 3, 1); }, {"model.seq_len", ">= 4"});
    expect_input_error([&] { make_task(synthetic_config("modadd", 16, 2, 0.001), 8, 1); },
                       {"data.modulus", "validation"});
    EXPECT_NO_THROW(make_task(synthetic_config("modadd", 16, 4096), 4, 1));
}

}  // namespace
}  // namespace normlab
