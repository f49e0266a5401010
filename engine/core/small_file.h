// Reading the files of a folder that may come from anywhere (configs, summaries, claims, sweep and
// experiment files, checkpoints): only a regular file is read, opened without blocking and checked on
// the open descriptor, and small files never past a limit per kind, so no folder can hang or exhaust a
// reader.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace normlab {

// The most bytes of a JSON file NormLab reads (config.json, summary.json, sweep files, ...).
inline constexpr uint64_t kMaxJsonFileBytes = 16ull << 20;
// The most bytes of a sweep claim (a few dozen in practice).
inline constexpr uint64_t kMaxClaimFileBytes = 64ull << 10;

// An open regular file. Errors are InputErrors starting "cannot read WHAT 'PATH': ".
class RegularFile {
  public:
    // Opens with O_NONBLOCK (a FIFO opens at once) and fstat()s the descriptor: throws when the file is
    // not a regular file (a FIFO, device, socket or directory) or cannot be opened; nothing when missing.
    static std::optional<RegularFile> open_if_present(const std::string& path, const std::string& what);
    // The same, but a missing file throws too.
    static RegularFile open(const std::string& path, const std::string& what);

    RegularFile(RegularFile&& other) noexcept;
    RegularFile& operator=(RegularFile&&) = delete;
    ~RegularFile();

    uint64_t size() const { return m_size; }
    // Bytes the file system stores for it (less than size() for a sparse file).
    uint64_t stored_bytes() const { return m_stored; }
    // Which file it is (another inode after an atomic replace).
    uint64_t device() const { return m_device; }
    uint64_t inode() const { return m_inode; }
    // Reads up to `count` bytes at `offset` into `out`; returns how many (fewer only at the end).
    size_t read_at(uint64_t offset, void* out, size_t count) const;
    // Everything from the start, refusing (InputError) a file of more than `limit` bytes.
    std::string read_all(uint64_t limit) const;
    // At most the first `count` bytes.
    std::string read_head(size_t count) const;

  private:
    RegularFile(std::string prefix, int fd) : m_prefix(std::move(prefix)), m_fd(fd) {}
    std::string m_prefix;
    int m_fd = -1;
    uint64_t m_size = 0, m_stored = 0, m_device = 0, m_inode = 0;
};

// The whole small file at `path` (at most `limit` bytes), as RegularFile::read_all.
std::string read_small_file(const std::string& path, uint64_t limit, const std::string& what = "file");

// The same, but nothing when the file does not exist (any other problem still throws).
std::optional<std::string> read_small_file_if_present(const std::string& path, uint64_t limit,
                                                      const std::string& what = "file");

}  // namespace normlab
