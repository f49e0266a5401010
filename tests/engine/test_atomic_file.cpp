// write_file_atomically against hostile and failing folders: a link planted at a temporary name is
// not written through, temporary names are unique, a write that fails (a file size limit, as on a
// full disk) is a ResourceError that leaves the old file and no temporary, and a rename that fails
// leaves no temporary either.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {
namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

int temporaries_in(const fs::path& dir) {
    int count = 0;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.path().extension() == ".tmp") ++count;
    return count;
}

class AtomicFile : public testing::TempFolderTest {
  protected:
    void SetUp() override {
        TempFolderTest::SetUp();
        fs::create_directories(dir / "run");
    }
};

TEST_F(AtomicFile, ALinkPlantedAtATemporaryNameIsNotWrittenThrough) {
    std::ofstream(dir / "outside.txt") << "keep";
    const fs::path target = dir / "run" / "summary.json";
    fs::create_symlink(dir / "outside.txt", dir / "run" / "summary.json.tmp");
    write_file_atomically(target.string(), "{\"status\": \"completed\"}\n");
    EXPECT_EQ(read_text(dir / "outside.txt"), "keep");
    EXPECT_FALSE(fs::is_symlink(target));
    EXPECT_EQ(read_text(target), "{\"status\": \"completed\"}\n");
}

TEST_F(AtomicFile, TemporaryNamesAreUniqueAndLeftNowhere) {
    const std::string path = (dir / "run" / "config.json").string();
    EXPECT_NE(temporary_path_for(path), temporary_path_for(path));
    for (int i = 0; i < 3; ++i) write_file_atomically(path, std::to_string(i));
    EXPECT_EQ(read_text(path), "2");
    EXPECT_EQ(temporaries_in(dir / "run"), 0);
}

TEST_F(AtomicFile, AFailedWriteLeavesTheOldFileAndNoTemporary) {
    const fs::path target = dir / "run" / "model.safetensors";
    write_file_atomically(target.string(), "old");
    rlimit saved{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
    const auto previous = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limited = saved;
    limited.rlim_cur = 100000;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
    EXPECT_THROW(write_file_atomically(target.string(), std::string(300000, 'x')), ResourceError);
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, previous);
    EXPECT_EQ(read_text(target), "old");
    EXPECT_EQ(temporaries_in(dir / "run"), 0);
}

TEST_F(AtomicFile, AFailedRenameIsAnInputErrorAndLeavesNoTemporary) {
    fs::create_directories(dir / "run" / "occupied" / "child");
    EXPECT_THROW(write_file_atomically((dir / "run" / "occupied").string(), "x"), InputError);
    EXPECT_EQ(temporaries_in(dir / "run"), 0);
}

}  // namespace
}  // namespace normlab
