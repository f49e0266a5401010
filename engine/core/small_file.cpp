// RegularFile: open without blocking, check the descriptor's kind, then pread; read_all stops one byte
// past its limit, so a file that grows while read (or claims size 0, like /proc) cannot run on.
#include "engine/core/small_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "engine/core/errors.h"

namespace normlab {

namespace {
std::string kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    return "a special file";
}

std::string size_text(uint64_t bytes) {
    return bytes >= (1ull << 20) ? std::to_string(bytes >> 20) + " MB" : std::to_string(bytes) + " bytes";
}
}  // namespace

std::optional<RegularFile> RegularFile::open_if_present(const std::string& path, const std::string& what) {
    std::string prefix = "cannot read " + what + " '" + path + "': ";
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT) return std::nullopt;
        throw InputError(prefix + std::strerror(errno));
    }
    RegularFile file(std::move(prefix), fd);
    struct stat info {};
    if (::fstat(fd, &info) != 0) throw InputError(file.m_prefix + std::strerror(errno));
    if (!S_ISREG(info.st_mode))
        throw InputError(file.m_prefix + "it is not a regular file (" + kind_of(info.st_mode) + ")");
    file.m_size = static_cast<uint64_t>(info.st_size);
    file.m_stored = static_cast<uint64_t>(info.st_blocks) * 512;
    file.m_device = static_cast<uint64_t>(info.st_dev);
    file.m_inode = static_cast<uint64_t>(info.st_ino);
    return file;
}

RegularFile RegularFile::open(const std::string& path, const std::string& what) {
    std::optional<RegularFile> file = open_if_present(path, what);
    if (!file) throw InputError("cannot read " + what + " '" + path + "': it does not exist; check the path");
    return std::move(*file);
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : m_prefix(std::move(other.m_prefix)),
      m_fd(std::exchange(other.m_fd, -1)),
      m_size(other.m_size),
      m_stored(other.m_stored),
      m_device(other.m_device),
      m_inode(other.m_inode) {}

RegularFile::~RegularFile() {
    if (m_fd >= 0) ::close(m_fd);
}

size_t RegularFile::read_at(uint64_t offset, void* out, size_t count) const {
    size_t got = 0;
    while (got < count) {
        const ssize_t n =
            ::pread(m_fd, static_cast<char*>(out) + got, count - got, static_cast<off_t>(offset + got));
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            throw InputError(m_prefix + std::strerror(errno));
        }
        got += static_cast<size_t>(n);
    }
    return got;
}

std::string RegularFile::read_head(size_t count) const {
    std::string text;
    char buffer[65536];
    while (text.size() < count) {
        const size_t got = read_at(text.size(), buffer, std::min(sizeof buffer, count - text.size()));
        if (got == 0) break;
        text.append(buffer, got);
    }
    return text;
}

std::string RegularFile::read_all(uint64_t limit) const {
    const auto too_large = [&] {
        return InputError(m_prefix + "it is larger than the " + size_text(limit) +
                          " such a file may have; it is not a file NormLab wrote");
    };
    if (m_size > limit) throw too_large();
    std::string text = read_head(static_cast<size_t>(limit) + 1);
    if (text.size() > limit) throw too_large();
    return text;
}

std::optional<std::string> read_small_file_if_present(const std::string& path, uint64_t limit,
                                                      const std::string& what) {
    const std::optional<RegularFile> file = RegularFile::open_if_present(path, what);
    if (!file) return std::nullopt;
    return file->read_all(limit);
}

std::string read_small_file(const std::string& path, uint64_t limit, const std::string& what) {
    return RegularFile::open(path, what).read_all(limit);
}

}  // namespace normlab
