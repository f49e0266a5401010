// normlab_cache_dir: the XDG rule, read from the environment each time it is asked.
#include "engine/core/cache_dir.h"

#include <cstdlib>
#include <filesystem>

namespace normlab {

namespace {

std::string environment(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
}

}  // namespace

std::string normlab_cache_dir() {
    const std::string xdg = environment("XDG_CACHE_HOME");
    if (!xdg.empty() && std::filesystem::path(xdg).is_absolute())
        return (std::filesystem::path(xdg) / "normlab").string();
    if (const std::string home = environment("HOME"); !home.empty())
        return (std::filesystem::path(home) / ".cache" / "normlab").string();
    return "";
}

}  // namespace normlab
