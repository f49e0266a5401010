// Reads a text file that another process may still be appending to, one poll at a time: only the new
// bytes are read, an incomplete last line is kept until its newline arrives, and a file that shrinks
// or is replaced (another inode, as an atomic rename makes) is read again from the start and says so.
// Used to open and watch run folders (metrics.jsonl, events.jsonl) written by any writer. A line
// longer than kMaxLineBytes is skipped (counted) without being held whole; a FIFO or device reads empty.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace normlab {

// The longest line a tailer keeps (a logged step of a 256-block model is about 150 KB).
inline constexpr size_t kMaxLineBytes = size_t{1} << 20;

class LineTailer {
  public:
    // `max_line_bytes`: lines longer than this are skipped (tests and fuzzing use small ones).
    explicit LineTailer(std::string path, size_t max_line_bytes = kMaxLineBytes);

    struct Poll {
        std::vector<std::string> lines;  // complete lines, without their newline (and any '\r')
        bool restarted = false;          // the file shrank or was replaced: lines are from its start
        bool missing = false;            // the file is not there (now); nothing else changed
        bool more = false;               // stopped at max_bytes: poll again for the rest
        int64_t longLines = 0;           // lines over kMaxLineBytes, skipped
    };
    // The complete lines added since the last poll, reading at most `max_bytes` new bytes.
    Poll poll(size_t max_bytes = size_t{16} << 20);

    const std::string& path() const { return m_path; }
    uint64_t offset() const { return m_offset; }  // bytes consumed so far (complete and partial)
    bool hasPartialLine() const { return !m_partial.empty() || m_skipping; }
    size_t partialBytes() const { return m_partial.size(); }  // held for that line: at most the cap

  private:
    void split_lines(const std::string& chunk, Poll& result);

    std::string m_path;
    size_t m_maxLine;
    uint64_t m_offset = 0;
    std::string m_partial;    // bytes after the last newline read
    bool m_skipping = false;  // inside a line over kMaxLineBytes: drop bytes until its newline
    uint64_t m_device = 0, m_inode = 0;
    bool m_seen = false;  // the file has been found at least once
};

}  // namespace normlab
