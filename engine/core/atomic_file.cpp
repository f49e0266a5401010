// The temporary-file-and-rename write behind every file NormLab replaces as a whole (summary.json,
// config.json, probe.json, sweep.json, checkpoints), with one set of messages that say what to fix.
#include "engine/core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/core/errors.h"
#include "engine/core/fd_stream.h"

namespace normlab {

namespace fs = std::filesystem;

namespace {
std::string quoted(const std::string& text) {
    return "'" + text + "'";
}

void check_directory(const fs::path& directory, const std::string& prefix) {
    std::error_code status_error;
    const fs::file_status status = fs::status(directory, status_error);
    if (!fs::exists(status))
        throw InputError(prefix + "the directory " + quoted(directory.string()) +
                         " does not exist; create it first");
    if (!fs::is_directory(status))
        throw InputError(prefix + quoted(directory.string()) + " is not a directory");
}

// Writes through `fd` what `write` produces, then fsyncs and closes it; throws ResourceError naming
// `temporary` (the descriptor is closed either way).
void write_and_close(int fd, const std::function<void(std::ostream&)>& write, const std::string& temporary,
                     const std::string& prefix) {
    int error = 0;
    try {
        FdStreamBuffer buffer(fd);
        std::ostream out(&buffer);
        write(out);
        out.flush();
        error = buffer.error() != 0 ? buffer.error() : (out ? 0 : EIO);
    } catch (...) {
        ::close(fd);
        throw;
    }
    if (error == 0 && ::fsync(fd) != 0) error = errno;
    if (::close(fd) != 0 && error == 0) error = errno;
    if (error != 0)
        throw ResourceError(prefix + "writing " + quoted(temporary) + " failed (" + std::strerror(error) +
                            "); check free disk space and permissions");
}

// Makes a rename in `directory` survive a power loss; a file system that cannot sync a directory
// (EINVAL) has nothing more to offer, so that is not an error.
void sync_directory(const fs::path& directory) {
    const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}
}  // namespace

std::string temporary_path_for(const std::string& path) {
    static std::atomic<unsigned long> counter{0};
    return path + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".tmp";
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                           const std::string& context, const WriteFence& fence) {
    const std::string prefix = context + ": ";
    const fs::path target(path);
    const fs::path directory = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    check_directory(directory, prefix);
    check_fence(fence);

    const std::string temporary = temporary_path_for(path);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        throw InputError(prefix + "the temporary file " + quoted(temporary) + " cannot be created (" +
                         std::strerror(errno) + "); check that the directory is writable");
    }
    const auto remove_temporary = [&temporary] { ::unlink(temporary.c_str()); };
    try {
        write_and_close(fd, write, temporary, prefix);
        check_fence(fence);  // the last moment before the file becomes visible
    } catch (...) {
        remove_temporary();
        throw;
    }
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
        const std::string reason = std::strerror(errno);
        remove_temporary();
        throw InputError(prefix + "renaming " + quoted(temporary) + " into place failed (" + reason +
                         "); check that the path is not a directory and that the directory is writable");
    }
    sync_directory(directory);
}

void write_file_atomically(const std::string& path, const std::string& text, const WriteFence& fence) {
    write_file_atomically(
        path, [&text](std::ostream& out) { out << text; }, "cannot write " + quoted(path), fence);
}

}  // namespace normlab
