// group.json (engine/io/run_group.h): written and read back, the shared config's differences, the
// members of a group folder, and group files that must be refused (a folder name leaving the group, a
// newer version).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "engine/core/errors.h"
#include "engine/io/run_group.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {
namespace fs = std::filesystem;

class RunGroupTest : public testing::TempFolderTest {
  protected:
    void write(const nlohmann::ordered_json& json) { std::ofstream(dir / kGroupFileName) << json.dump(); }
};

TEST_F(RunGroupTest, WrittenAndReadBack) {
    Config config;
    config.train.lr = 0.003;
    config.train.seed = 9;  // not the group's: each run has its own
    write(group_json(config, {4, 5, 7}));
    const GroupFile group = read_group_file((dir / kGroupFileName).string());
    EXPECT_EQ(group.seeds, (std::vector<uint64_t>{4, 5, 7}));
    EXPECT_EQ(group.folders, (std::vector<std::string>{"seed-4", "seed-5", "seed-7"}));
    EXPECT_DOUBLE_EQ(group.config.train.lr, 0.003);
    EXPECT_TRUE(group_config_differences(group.config, config).empty());  // train.seed is not compared
    Config other = config;
    other.model.layers = 7;
    EXPECT_EQ(group_config_differences(group.config, other), (std::vector<std::string>{"model.layers"}));
    const std::vector<GroupMember> members = group_members(dir.string());
    ASSERT_EQ(members.size(), 3u);
    EXPECT_EQ(members[2].folder, (dir / "seed-7").string());  // listed before it exists
    EXPECT_EQ(members[2].seed, 7u);
}

TEST_F(RunGroupTest, RefusesFoldersOutsideTheGroupAndNewerVersions) {
    const Config config;
    nlohmann::ordered_json json = group_json(config, {1});
    json["runs"][0]["folder"] = "../elsewhere";
    write(json);
    EXPECT_THROW(group_members(dir.string()), InputError);
    json = group_json(config, {1});
    json["version"] = 2;
    write(json);
    try {
        read_group_file((dir / kGroupFileName).string());
        FAIL() << "version 2 was read";
    } catch (const InputError& error) {
        EXPECT_NE(std::string(error.what()).find("version 2 is not 1"), std::string::npos) << error.what();
    }
    json = group_json(config, {1});
    json["format"] = 3;
    write(json);
    EXPECT_THROW(read_group_file((dir / kGroupFileName).string()), InputError);
}

}  // namespace
}  // namespace normlab
