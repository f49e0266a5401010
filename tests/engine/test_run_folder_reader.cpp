// RunFolderReader on folders as the CLI writes them and as others might: every record and event of a
// trained run read back with the values written, a folder polled while it is written yielding each
// step once, bad and foreign content counted or noted rather than fatal, and non-run folders refused
// with a message.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/core/errors.h"
#include "engine/io/record_fields.h"
#include "engine/io/records_json.h"
#include "engine/io/run_folder.h"
#include "engine/io/run_folder_reader.h"
#include "engine/train/trainer.h"
#include "tests/engine/model_test_support.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {
namespace fs = std::filesystem;

Config tiny_config(int steps) {
    Config config = testing::small_model_config(16, 2, 16, 4, steps);
    config.telemetry.every = 3;
    config.threads = 1;
    return config;
}

using RunFolderReaderTest = testing::TempFolderTest;

TEST_F(RunFolderReaderTest, ReadsBackWhatTheWriterWroteWhileItWrites) {
    const Config config = tiny_config(12);
    Trainer trainer(config);
    RunFolder folder(dir.string(), config, false);
    RunFolderReader reader(dir.string());
    EXPECT_EQ(reader.configNote(), "");
    EXPECT_EQ(reader.config().model.d_model, 16);
    std::vector<StepRecord> written, read;
    Event change;
    change.step = 6;
    change.kind = "change";
    change.key = "train.lr";
    change.value = "0.002";
    for (int step = 1; step <= 12; ++step) {
        written.push_back(trainer.step().record);
        folder.append_metrics(written.back());
        if (step == 5) folder.append_event(change);
        if (step % 4 == 0)  // polled now and then while the run goes on
            for (StepRecord& record : reader.poll().records) read.push_back(std::move(record));
    }
    folder.write_summary(summary_json(trainer, 1.0));
    RunFolderReader::Update rest = reader.poll();
    for (StepRecord& record : rest.records) read.push_back(std::move(record));
    ASSERT_EQ(read.size(), written.size());
    for (size_t i = 0; i < read.size(); ++i) {
        EXPECT_EQ(read[i].step, written[i].step);
        EXPECT_EQ(read[i].loss, written[i].loss);
        EXPECT_EQ(read[i].layers.size(), written[i].layers.size());
        if (!read[i].layers.empty()) {
            EXPECT_EQ(read[i].layers[1].grad.w_2, written[i].layers[1].grad.w_2);
        }
    }
    EXPECT_EQ(reader.skippedLines(), 0);
    const std::optional<RunFolderSummary> summary = reader.summary();
    ASSERT_TRUE(summary);
    EXPECT_EQ(summary->status, "completed");
    EXPECT_EQ(summary->steps, 12);
    EXPECT_EQ(summary->final_loss, trainer.final_loss());
    EXPECT_EQ(status_from_summary(summary->status), RunStatus::Completed);
}

TEST_F(RunFolderReaderTest, BadLinesAreCountedAndTheRestRead) {
    fs::create_directories(dir);
    std::ofstream(dir / "config.json") << R"({"model": {"layers": 3}, "writer": "someone else"})";
    std::ofstream(dir / "metrics.jsonl", std::ios::binary)
        << R"({"step": 1, "loss": 3.0})"
        << "\n"
        << "not json at all\n"
        << "\xff\xfe\x81\n"
        << R"({"loss": 2.0})"
        << "\n"
        << R"({"step": 2, "loss": 2.5})"
        << "\n"
        << R"({"step": 3, "lo)";  // torn: still being written
    RunFolderReader reader(dir.string());
    EXPECT_NE(reader.configNote().find("config.json was not read"), std::string::npos) << reader.configNote();
    const RunFolderReader::Update update = reader.poll();
    ASSERT_EQ(update.records.size(), 2u);
    EXPECT_EQ(update.records[1].loss, 2.5);
    EXPECT_EQ(update.skippedLines, 3);  // the torn last line waits; it is not counted
    EXPECT_FALSE(reader.summary().has_value());
}

TEST_F(RunFolderReaderTest, NonRunFoldersAreRefusedWithAMessage) {
    EXPECT_THROW(RunFolderReader((dir / "missing").string()), InputError);
    fs::create_directories(dir);
    std::ofstream(dir / "notes.txt") << "hello";
    try {
        RunFolderReader reader(dir.string());
        FAIL() << "a folder without config.json or metrics.jsonl was accepted";
    } catch (const InputError& error) {
        EXPECT_NE(std::string(error.what()).find("not a run folder"), std::string::npos) << error.what();
    }
}

// A new run folder appears whole: made under a hidden name with its config.json, then renamed into
// place (a run killed while writing config.json straight into its new folder left one holding only a
// temporary file, which `runs` could not read). A hidden folder left by such a kill is not listed.
TEST_F(RunFolderReaderTest, ANewFolderAppearsWithItsConfigAndHiddenOnesAreNotListed) {
    const Config config = tiny_config(3);
    {
        RunFolder run((dir / "runs" / "a").string(), config, false);
        EXPECT_TRUE(fs::exists(dir / "runs" / "a" / "config.json"));
    }
    RunFolder trailing((dir / "runs" / "b/").string(), config, false);  // "b/" is the folder b
    std::vector<std::string> entries;
    for (const auto& entry : fs::directory_iterator(dir / "runs")) entries.push_back(entry.path().filename());
    std::sort(entries.begin(), entries.end());
    EXPECT_EQ(entries, (std::vector<std::string>{"a", "b"}));  // no staging folder left beside them
    // What a kill between the staging folder's config and its rename leaves: not a run of the listing.
    fs::create_directories(dir / "runs" / ".c.new-12345");
    std::ofstream(dir / "runs" / ".c.new-12345" / "config.json") << config_to_json_text(config);
    const std::vector<std::string> listed = find_run_folders((dir / "runs").string());
    ASSERT_EQ(listed.size(), 2u);
    EXPECT_EQ(fs::path(listed[0]).filename(), "a");
    EXPECT_EQ(fs::path(listed[1]).filename(), "b");
    // An existing empty folder is still taken as it is.
    fs::create_directories(dir / "runs" / "d");
    RunFolder existing((dir / "runs" / "d").string(), config, false);
    EXPECT_TRUE(fs::exists(dir / "runs" / "d" / "config.json"));
}

// A foreign config.json with the user's own keys, a recognised and an unknown norm type.
TEST(RunFolderReaderForeign, KeepsTheWritersOwnKeysAndANormTypeItRecognises) {
    const testing::TestFolder scratch;
    const fs::path& folder = scratch.dir;
    std::ofstream(folder / "config.json")
        << R"({"source": "normlab-torch", "model": {"layers": 2, "norm_type": "rmsnorm"},
               "torch": {"world_size": 4}, "user": {"lr": 0.003, "norm": "rms", "sizes": [1, 2]}})";
    {
        const RunFolderReader reader(folder.string());
        EXPECT_EQ(reader.config().model.norm_type, NormType::RmsNorm);
        EXPECT_EQ(
            reader.writerKeys(),
            (FlatConfig{
                {"user.lr", "0.003"}, {"user.norm", "rms"}, {"user.sizes", "[1,2]"}, {"world_size", "4"}}));
    }
    std::ofstream(folder / "config.json") << R"({"source": "x", "model": {"norm_type": "groupnorm"}})";
    const RunFolderReader other(folder.string());
    EXPECT_EQ(other.config().model.norm_type, NormType::LayerNorm);  // not one of NormLab's: not taken
    EXPECT_TRUE(other.knownKeys().empty());
    EXPECT_TRUE(other.writerKeys().empty());
}

// "running" with a summary.json older than kStaleAfterSeconds: its writer is gone.
TEST(RunFolderSummaryStatus, ARunningRunWhoseWriterWentQuietIsStale) {
    RunFolderSummary summary;
    EXPECT_EQ(shown_status(summary, 1e9), "unknown");
    summary.status = "running";
    summary.written_at = 1000.0;
    EXPECT_EQ(shown_status(summary, 1000.0 + kStaleAfterSeconds - 1), "running");
    EXPECT_EQ(shown_status(summary, 1000.0 + kStaleAfterSeconds), "stale");
    summary.status = "completed";
    EXPECT_EQ(shown_status(summary, 1e9), "completed");  // a finished run never goes stale

    // Read from a folder: the heartbeat when summary.json has one, else the file's modification time.
    const testing::TestFolder scratch;
    const fs::path& folder = scratch.dir;
    std::ofstream(folder / "summary.json") << R"({"status": "running", "steps": 3, "heartbeat": 1234.5})";
    EXPECT_EQ(read_run_summary(folder.string())->written_at, 1234.5);
    std::ofstream(folder / "summary.json") << R"({"status": "running", "steps": 3})";
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const std::optional<RunFolderSummary> fresh = read_run_summary(folder.string());
    ASSERT_TRUE(fresh && fresh->written_at);
    EXPECT_NEAR(*fresh->written_at, now, 5.0);
    EXPECT_EQ(shown_status(*fresh, now), "running");
    fs::last_write_time(folder / "summary.json", fs::file_time_type::clock::now() - std::chrono::hours(1));
    EXPECT_EQ(shown_status(*read_run_summary(folder.string()), now), "stale");
}

TEST(RunFolderReaderForeign, ReadsAFolderWrittenByThePyTorchBridge) {
    // tests/data/bridge-run: 8 steps of a 3-block Hugging Face GPT-2 (d 32, 4 heads) recorded by the
    // bridge (python/tests/bridge_fixture.py) with blocks every 2 steps and attention every 4.
    RunFolderReader reader(std::string(NORMLAB_TEST_DATA_DIR) + "/bridge-run");
    EXPECT_EQ(reader.source(), "normlab-torch");
    EXPECT_NE(reader.configNote().find("written by normlab-torch"), std::string::npos) << reader.configNote();
    EXPECT_EQ(reader.config().model.layers, 3);
    EXPECT_EQ(reader.config().model.d_model, 32);
    EXPECT_EQ(reader.config().model.heads, 4);
    EXPECT_EQ(reader.knownKeys(),
              (std::vector<std::string>{"model.layers", "model.d_model", "model.heads", "model.norm_type"}));
    EXPECT_EQ(reader.config().model.norm_type, NormType::LayerNorm);    // the bridge's "norm_type"
    EXPECT_EQ(reader.writerKeys(), (FlatConfig{{"world_size", "1"}}));  // its script kept no keys of its own

    const RunFolderReader::Update update = reader.poll();
    EXPECT_EQ(update.skippedLines, 0);
    ASSERT_EQ(update.records.size(), 8u);
    for (size_t i = 0; i < update.records.size(); ++i) {
        const StepRecord& record = update.records[i];
        EXPECT_EQ(record.step, static_cast<int64_t>(i + 1));
        EXPECT_NEAR(record.loss, std::log(64.0), 0.1);  // a fresh model on a 64-token vocabulary
        EXPECT_EQ(record.layers.empty(), record.step != 1 && record.step % 2 != 0) << record.step;
    }
    const StepRecord& logged = update.records[1];  // step 2: blocks, no attention sample
    ASSERT_EQ(logged.layers.size(), 3u);
    for (const LayerTelemetry& layer : logged.layers) {
        EXPECT_GT(layer.grad.w_qkv, 0.0);
        EXPECT_GT(layer.grad.norm2, 0.0);
        EXPECT_FALSE(record_fields::recorded(layer.grad.norm1_out));   // a role the model does not have
        EXPECT_FALSE(record_fields::recorded(layer.dependency_attn));  // a field the bridge does not measure
        EXPECT_GT(layer.resid, 0.0);
        EXPECT_GT(layer.resid_attn, 0.0);
        EXPECT_GT(layer.update_ratio, 0.0);
        EXPECT_GT(layer.adam_eps_fraction, 0.0);  // the bridge's Adam-epsilon share, a fraction
        EXPECT_LT(layer.adam_eps_fraction, 1.0);
        EXPECT_FALSE(record_fields::recorded(layer.attn_entropy)) << "not sampled on step 2: a gap, not 0";
    }
    const StepRecord& sampled = update.records[3];  // step 4: attention sampled
    for (const LayerTelemetry& layer : sampled.layers) {
        EXPECT_GT(layer.attn_entropy, 0.0);
        EXPECT_LE(layer.attn_entropy, std::log(16.0));  // at most uniform over the 16 positions
        EXPECT_TRUE(std::isfinite(layer.attn_max_logit));
    }
    ASSERT_EQ(update.events.size(), 1u);
    EXPECT_EQ(update.events[0].kind, "change");
    EXPECT_EQ(update.events[0].key, "train.lr");

    const std::optional<RunFolderSummary> summary = reader.summary();
    ASSERT_TRUE(summary.has_value());
    EXPECT_EQ(summary->status, "completed");
    EXPECT_EQ(summary->steps, 8);
    EXPECT_TRUE(summary->heartbeat.has_value());
}

}  // namespace
}  // namespace normlab
