// resource_dir: the environment, then the installed layout beside /proc/self/exe, then the build's source.
#include "engine/core/resource_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#ifndef NORMLAB_RESOURCE_DIR
#define NORMLAB_RESOURCE_DIR "resources"
#endif
#ifndef NORMLAB_INSTALLED_RESOURCE_DIR
#define NORMLAB_INSTALLED_RESOURCE_DIR "../share/normlab"
#endif

namespace normlab {

namespace {
namespace fs = std::filesystem;

bool holds_resources(const fs::path& folder) {
    std::error_code error;
    return fs::is_regular_file(folder / "corpus.txt", error);
}

// <folder of the running executable>/NORMLAB_INSTALLED_RESOURCE_DIR, or empty when unknown.
fs::path installed_dir() {
    std::error_code error;
    const fs::path exe = fs::read_symlink("/proc/self/exe", error);
    if (error || exe.empty()) return {};
    return (exe.parent_path() / NORMLAB_INSTALLED_RESOURCE_DIR).lexically_normal();
}
}  // namespace

std::string resource_dir() {
    if (const char* chosen = std::getenv("NORMLAB_RESOURCE_DIR"); chosen && *chosen) return chosen;
    const fs::path installed = installed_dir();
    if (!installed.empty() && holds_resources(installed)) return installed.string();
    return NORMLAB_RESOURCE_DIR;
}

}  // namespace normlab
