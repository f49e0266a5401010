// A folder of its own for a GoogleTest test that writes files: under the system's temporary folder, named
// for this process, the suite, the test and a count (ctest runs tests in parallel, and a test may hold
// several), empty when made and removed with everything in it when it goes. A fixture derives from
// TempFolderTest and writes under `dir`; a plain TEST holds a TestFolder.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>

namespace normlab::testing {

class TestFolder {
  public:
    TestFolder() : dir(next_path()) {
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
    }
    // Write permission comes back first, for tests that take it away to make writes fail.
    ~TestFolder() {
        std::error_code ignored;
        std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ignored);
        std::filesystem::remove_all(dir, ignored);
    }
    TestFolder(const TestFolder&) = delete;
    TestFolder& operator=(const TestFolder&) = delete;

    // A path inside the folder, as a string (what the engine's file functions take).
    std::string operator/(const std::string& name) const { return (dir / name).string(); }

    const std::filesystem::path dir;

  private:
    static std::filesystem::path next_path() {
        static std::atomic<int> count{0};
        const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string test = info ? std::string(info->test_suite_name()) + "_" + info->name() : "outside";
        for (char& c : test)
            if (c == '/') c = '_';  // parameterised tests' names: one folder, not nested ones
        return std::filesystem::temp_directory_path() /
               ("normlab_" + std::to_string(::getpid()) + "_" + test + "_" + std::to_string(count++));
    }
};

class TempFolderTest : public ::testing::Test {
  protected:
    void SetUp() override {
        m_folder.emplace();
        dir = m_folder->dir;
    }
    void TearDown() override { m_folder.reset(); }
    std::filesystem::path dir;

  private:
    std::optional<TestFolder> m_folder;
};

}  // namespace normlab::testing
