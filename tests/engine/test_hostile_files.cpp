// Files from a hostile folder (issue 31): JSON nested 50,000 levels deep, FIFOs and links to
// /dev/zero in place of small files (an alarm fails a test that blocks), size caps, a symlink loop
// among run folders, a sparse checkpoint, and sweep claims: a lost claim fences its holder's writes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/config/config.h"
#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/small_file.h"
#include "engine/io/run_folder.h"
#include "engine/io/run_folder_reader.h"
#include "engine/io/safetensors.h"
#include "engine/sweep/point_claim.h"
#include "engine/sweep/sweep_folder.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {
namespace fs = std::filesystem;

std::string nested_arrays(int depth) {
    return std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']');
}

// The message of the InputError `call` throws ("" when it throws none).
template <typename Call>
std::string input_error_of(Call call) {
    try {
        call();
    } catch (const InputError& error) {
        return error.what();
    }
    return "";
}

class HostileFiles : public testing::TempFolderTest {
  protected:
    void SetUp() override {
        TempFolderTest::SetUp();
        ::alarm(30);  // a reader that blocks on a FIFO ends the test run instead of hanging it
    }
    void TearDown() override {
        ::alarm(0);
        TempFolderTest::TearDown();
    }
    std::string fifo(const std::string& name) const {
        const std::string path = (dir / name).string();
        EXPECT_EQ(::mkfifo(path.c_str(), 0644), 0);
        return path;
    }
    void write(const fs::path& path, const std::string& text) const {
        std::ofstream(path, std::ios::binary) << text;
    }
};

TEST_F(HostileFiles, JsonNestedDeeperThanTheLimitIsRefusedWithTheSource) {
    EXPECT_NO_THROW(parse_json(nested_arrays(kMaxJsonDepth), "x"));
    const std::string message = input_error_of([] { parse_json(nested_arrays(50000), "deep.json"); });
    EXPECT_NE(message.find("deep.json: JSON nested deeper than 64 levels"), std::string::npos) << message;
    EXPECT_FALSE(parse_json_or_nothing(nested_arrays(kMaxJsonDepth + 1)).has_value());
    std::string deep_object;
    for (int i = 0; i < 50000; ++i) deep_object += "{\"a\":";
    deep_object += "1" + std::string(50000, '}');
    EXPECT_FALSE(parse_json_or_nothing<nlohmann::ordered_json>(deep_object).has_value());
}

TEST_F(HostileFiles, DeepConfigsAndSetValuesAreInputErrorsWithShortMessages) {
    write(dir / "deep.json", "{\"model\": {\"d_model\": " + nested_arrays(50000) + "}}");
    const std::string config_message =
        input_error_of([&] { config_from_file((dir / "deep.json").string()); });
    EXPECT_NE(config_message.find("nested deeper than 64"), std::string::npos) << config_message;
    Config config;
    const std::string set_message =
        input_error_of([&] { apply_override(config, "train.lr=" + nested_arrays(50000)); });
    EXPECT_NE(set_message.find("train.lr"), std::string::npos) << set_message;
    EXPECT_LT(set_message.size(), 400u) << "a --set value was copied whole into the message";
}

TEST_F(HostileFiles, AFifoOrADeviceIsRefusedWithoutBlocking) {
    const std::string pipe = fifo("config.json");
    EXPECT_NE(input_error_of([&] {
                  read_small_file(pipe, kMaxJsonFileBytes, "config file");
              }).find("'" + pipe + "': it is not a regular file (a FIFO)"),
              std::string::npos);
    EXPECT_NE(input_error_of([&] { config_from_file(pipe); }).find("a FIFO"), std::string::npos);
    fs::create_symlink("/dev/zero", dir / "zero.json");
    EXPECT_NE(input_error_of([&] {
                  read_small_file((dir / "zero.json").string(), kMaxJsonFileBytes);
              }).find("not a regular file (a device)"),
              std::string::npos);
}

TEST_F(HostileFiles, ASmallFileOverItsLimitIsRefused) {
    write(dir / "big.json", std::string(2000, ' '));
    EXPECT_EQ(read_small_file((dir / "big.json").string(), 2000).size(), 2000u);
    EXPECT_NE(input_error_of([&] {
                  read_small_file((dir / "big.json").string(), 1999, "summary");
              }).find("larger than the 1999 bytes"),
              std::string::npos);
}

TEST_F(HostileFiles, ARunFolderOfFifosIsReadWithNotesNotHangs) {
    fifo("config.json");
    fifo("summary.json");
    fifo("metrics.jsonl");
    const RunFolderReader reader(dir.string());
    EXPECT_NE(reader.configNote().find("a FIFO"), std::string::npos) << reader.configNote();
    EXPECT_FALSE(reader.summary().has_value());
    RunFolderReader polled(dir.string());
    EXPECT_TRUE(polled.poll().records.empty());
}

TEST_F(HostileFiles, ASymlinkLoopAmongRunFoldersIsSkippedWithANote) {
    fs::create_directories(dir / "good");
    write(dir / "good" / "metrics.jsonl", "");
    fs::create_symlink("loop", dir / "loop");
    std::vector<std::string> notes;
    EXPECT_EQ(find_run_folders(dir.string(), &notes), std::vector<std::string>{(dir / "good").string()});
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("loop"), std::string::npos) << notes[0];
}

TEST_F(HostileFiles, SweepFilesAndClaimsThatAreFifosDoNotHang) {
    fifo("sweep.json");
    EXPECT_NE(input_error_of([&] { load_sweep(dir.string()); }).find("a FIFO"), std::string::npos);
    fs::create_directories(dir / "claims");
    EXPECT_EQ(::mkfifo((dir / "claims" / "p1.json").c_str(), 0644), 0);
    const std::optional<ClaimInfo> claim = PointClaim::read(dir.string(), "p1");
    ASSERT_TRUE(claim.has_value());  // a claim nobody keeps alive: no process, no token
    EXPECT_EQ(claim->pid, 0);
    EXPECT_EQ(claim->token, "");
}

// A worker that lost its claim between its first check and its folder's preparation (paused there):
// every removal checks the fence, so the finished files of the worker that took over stay.
TEST_F(HostileFiles, AFencedRunFolderRemovesNothingOnceItsClaimIsLost) {
    for (const char* name : {"metrics.jsonl", "events.jsonl", "summary.json", "config.json"})
        write(dir / name, std::string("the new holder's ") + name);
    int checks = 0;
    const WriteFence lost_after_the_first_check = [&checks] {
        if (++checks > 1) throw WriteFenceLost("lost its claim");
    };
    EXPECT_THROW(RunFolder(dir.string(), Config{}, true, lost_after_the_first_check), WriteFenceLost);
    for (const char* name : {"metrics.jsonl", "events.jsonl", "summary.json", "config.json"})
        EXPECT_TRUE(fs::exists(dir / name)) << name << " was removed after the claim was lost";
}

TEST_F(HostileFiles, AClaimWhoseHeartbeatStandsStillIsTakenOverAndFencesItsHolder) {
    ClaimTiming timing;
    timing.stale_after = 0.3;
    std::optional<PointClaim> first = PointClaim::acquire(dir.string(), "p1", timing);
    ASSERT_TRUE(first.has_value());
    EXPECT_TRUE(first->holds());
    // Its process lives (this one) but its beat stands still, as when stopped: stale after 0.3 s.
    std::optional<PointClaim> second = PointClaim::acquire(dir.string(), "p1", timing);
    ASSERT_TRUE(second.has_value());
    EXPECT_FALSE(first->holds());
    EXPECT_THROW(first->check(), WriteFenceLost);
    EXPECT_THROW(first->heartbeat(), WriteFenceLost);
    write(dir / "summary.json", "second's");
    EXPECT_THROW(write_file_atomically((dir / "summary.json").string(), "first's", first->fence()),
                 WriteFenceLost);
    std::ifstream summary(dir / "summary.json");
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(summary), {}), "second's");
    for (const auto& entry : fs::directory_iterator(dir))
        EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
    EXPECT_NO_THROW(second->heartbeat());
    EXPECT_TRUE(second->holds());
}

TEST_F(HostileFiles, ASymlinkedClaimsFolderIsNeverWrittenThrough) {
    fs::create_directories(dir / "outside");
    fs::create_directories(dir / "sweep");
    fs::create_directory_symlink(dir / "outside", dir / "sweep" / "claims");
    EXPECT_NE(input_error_of([&] {
                  PointClaim::acquire((dir / "sweep").string(), "p1");
              }).find("claims is a symbolic link"),
              std::string::npos);
    EXPECT_TRUE(fs::is_empty(dir / "outside"));
}

TEST_F(HostileFiles, ASparseCheckpointIsRefusedBeforeItsTensorsAreAllocated) {
    const uint64_t bytes = 64ull << 20;  // declared; the file stores a few KB
    const std::string header = "{\"big\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(bytes / 4) +
                               "],\"data_offsets\":[0," + std::to_string(bytes) + "]}}";
    const fs::path path = dir / "sparse.safetensors";
    {
        std::ofstream out(path, std::ios::binary);
        const uint64_t length = header.size();
        out.write(reinterpret_cast<const char*>(&length), 8);
        out << header;
    }
    fs::resize_file(path, 8 + header.size() + bytes);
    const std::string message = input_error_of([&] { read_safetensors(path.string()); });
    EXPECT_NE(message.find("sparse"), std::string::npos) << message;
}

TEST_F(HostileFiles, DeepSafetensorsMetadataIsRefused) {
    const std::string header = "{\"__metadata__\": {\"k\": " + nested_arrays(50000) + "}}";
    const fs::path path = dir / "deep.safetensors";
    {
        std::ofstream out(path, std::ios::binary);
        const uint64_t length = header.size();
        out.write(reinterpret_cast<const char*>(&length), 8);
        out << header;
    }
    const std::string message = input_error_of([&] { read_safetensors(path.string()); });
    EXPECT_NE(message.find("nested deeper than 64"), std::string::npos) << message;
}

}  // namespace
}  // namespace normlab
