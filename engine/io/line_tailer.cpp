// LineTailer: open as a RegularFile (never blocking) for identity, kind and size, then one pread
// of the new bytes split at newlines; an over-long line is dropped as it arrives, never buffered whole.
#include "engine/io/line_tailer.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "engine/core/errors.h"
#include "engine/core/small_file.h"

namespace normlab {

namespace {
// Nothing for a missing file, and for a FIFO or a device: never waited on, never read.
std::optional<RegularFile> open_or_nothing(const std::string& path) {
    try {
        return RegularFile::open_if_present(path, "lines");
    } catch (const InputError&) {
        return std::nullopt;
    }
}
}  // namespace

LineTailer::LineTailer(std::string path, size_t max_line_bytes)
    : m_path(std::move(path)), m_maxLine(max_line_bytes) {}

LineTailer::Poll LineTailer::poll(size_t max_bytes) {
    Poll result;
    const std::optional<RegularFile> file = open_or_nothing(m_path);
    if (!file) {
        result.missing = true;
        return result;
    }
    const uint64_t size = file->size();
    const bool replaced = m_seen && (file->device() != m_device || file->inode() != m_inode);
    if (replaced || size < m_offset) {
        result.restarted = true;
        m_offset = 0;
        m_partial.clear();
        m_skipping = false;
    }
    m_seen = true;
    m_device = file->device();
    m_inode = file->inode();
    if (size == m_offset) return result;

    std::string chunk(std::min<uint64_t>(size - m_offset, max_bytes), '\0');
    try {
        chunk.resize(file->read_at(m_offset, chunk.data(), chunk.size()));
    } catch (const InputError&) {
        chunk.clear();  // a read error: tried again at the next poll
    }
    m_offset += chunk.size();
    result.more = m_offset < size;
    split_lines(chunk, result);
    return result;
}

void LineTailer::split_lines(const std::string& chunk, Poll& result) {
    size_t start = 0;
    for (size_t newline = chunk.find('\n'); newline != std::string::npos; newline = chunk.find('\n', start)) {
        const size_t length = m_partial.size() + (newline - start);
        if (m_skipping || length > m_maxLine) {
            ++result.longLines;
        } else {
            std::string line = std::move(m_partial) + chunk.substr(start, newline - start);
            if (!line.empty() && line.back() == '\r') line.pop_back();
            result.lines.push_back(std::move(line));
        }
        m_partial.clear();
        m_skipping = false;
        start = newline + 1;
    }
    if (m_skipping) return;
    if (m_partial.size() + (chunk.size() - start) > m_maxLine) {
        m_partial.clear();  // over the cap with no newline yet: drop it now, count it at its newline
        m_skipping = true;
        return;
    }
    m_partial.append(chunk, start, std::string::npos);
}

}  // namespace normlab
