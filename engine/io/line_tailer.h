// Reads a text file that another process may still be appending to, one poll at a time: only the new
// bytes are read, an incomplete last line is kept until its newline arrives, and a file that shrinks
// or is replaced (another inode, as an atomic rename makes) is read again from the start and says so.
// Used to open and watch run folders (metrics.jsonl, events.jsonl) written by any writer.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace normlab {

class LineTailer {
  public:
    explicit LineTailer(std::string path);

    struct Poll {
        std::vector<std::string> lines;  // complete lines, without their newline (and any '\r')
        bool restarted = false;          // the file shrank or was replaced: lines are from its start
        bool missing = false;            // the file is not there (now); nothing else changed
        bool more = false;               // stopped at max_bytes: poll again for the rest
    };
    // The complete lines added since the last poll, reading at most `max_bytes` new bytes.
    Poll poll(size_t max_bytes = size_t{16} << 20);

    const std::string& path() const { return m_path; }
    uint64_t offset() const { return m_offset; }  // bytes consumed so far (complete and partial)
    bool hasPartialLine() const { return !m_partial.empty(); }

  private:
    std::string m_path;
    uint64_t m_offset = 0;
    std::string m_partial;  // bytes after the last newline read
    uint64_t m_device = 0, m_inode = 0;
    bool m_seen = false;  // the file has been found at least once
};

}  // namespace normlab
