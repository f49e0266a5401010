// Real folders inside a sweep: each part of S/<relative> is looked at with lstat (a link is never
// followed) and created with mkdir, which does not follow a link planted at its name either.
#include "engine/sweep/sweep_paths.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/core/errors.h"

namespace normlab {

namespace {
namespace fs = std::filesystem;

// What is wrong with `path` as a folder to write in; nothing when it is one or is missing.
std::optional<std::string> part_problem(const fs::path& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0)
        return errno == ENOENT ? std::nullopt : std::optional<std::string>(std::strerror(errno));
    if (S_ISLNK(info.st_mode)) return std::string("is a symbolic link");
    if (!S_ISDIR(info.st_mode)) return std::string("is not a folder");
    return std::nullopt;
}

std::string refusal(const fs::path& path, const std::string& problem) {
    return path.string() + " " + problem +
           "; sweep workers write only inside the sweep folder, so replace it with a real folder "
           "(or remove it)";
}
}  // namespace

std::optional<std::string> sweep_folder_problem(const std::string& sweep_dir, const std::string& relative) {
    fs::path path(sweep_dir);
    for (const fs::path& part : fs::path(relative)) {
        path /= part;
        if (const std::optional<std::string> problem = part_problem(path)) return refusal(path, *problem);
    }
    return std::nullopt;
}

std::string real_sweep_folder(const std::string& sweep_dir, const std::string& relative) {
    fs::path path(sweep_dir);
    for (const fs::path& part : fs::path(relative)) {
        path /= part;
        if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST)
            throw InputError("cannot create " + path.string() + ": " + std::strerror(errno));
        if (const std::optional<std::string> problem = part_problem(path))
            throw InputError(refusal(path, *problem));
    }
    return path.string();
}

}  // namespace normlab
