// The temporary-file-and-rename write behind every file NormLab replaces as a whole (summary.json,
// config.json, probe.json, checkpoints), with one set of messages that say what to fix.
#include "engine/io/atomic_file.h"

#include <filesystem>
#include <fstream>

#include "engine/core/errors.h"

namespace normlab {

namespace fs = std::filesystem;

namespace {
std::string quoted(const std::string& text) {
    return "'" + text + "'";
}
}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                           const std::string& context) {
    const std::string prefix = context + ": ";
    const fs::path target(path);
    const fs::path directory = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    std::error_code status_error;
    const fs::file_status directory_status = fs::status(directory, status_error);
    if (!fs::exists(directory_status)) {
        throw InputError(prefix + "the directory " + quoted(directory.string()) +
                         " does not exist; create it first");
    }
    if (!fs::is_directory(directory_status)) {
        throw InputError(prefix + quoted(directory.string()) + " is not a directory");
    }

    const std::string temporary = path + ".tmp";
    const auto remove_temporary = [&temporary] {
        std::error_code ignored;
        fs::remove(temporary, ignored);
    };
    {
        std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
        if (!file) {
            throw InputError(prefix + "the temporary file " + quoted(temporary) +
                             " cannot be created; check that the directory is writable");
        }
        try {
            write(file);
        } catch (...) {
            file.close();
            remove_temporary();
            throw;
        }
        file.close();
        if (!file) {
            remove_temporary();
            throw ResourceError(prefix + "writing " + quoted(temporary) +
                                " failed; check free disk space and permissions");
        }
    }
    std::error_code rename_error;
    fs::rename(temporary, target, rename_error);
    if (rename_error) {
        remove_temporary();
        throw InputError(prefix + "renaming " + quoted(temporary) + " into place failed (" +
                         rename_error.message() +
                         "); check that the path is not a directory and that the directory is writable");
    }
}

void write_file_atomically(const std::string& path, const std::string& text) {
    write_file_atomically(
        path, [&text](std::ostream& out) { out << text; }, "cannot write " + quoted(path));
}

}  // namespace normlab
