// A folder of its own for each GoogleTest test that writes files: under the system's temporary folder,
// named for this process, the suite and the test (ctest runs them in parallel), empty when the test
// starts and removed after it. A fixture derives from TempFolderTest and writes under `dir`.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace normlab::testing {

inline std::filesystem::path test_folder_path() {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return std::filesystem::temp_directory_path() /
           ("normlab_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
}

class TempFolderTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir = test_folder_path();
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
    }
    void TearDown() override { std::filesystem::remove_all(dir); }
    std::filesystem::path dir;
};

}  // namespace normlab::testing
