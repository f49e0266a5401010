// LineTailer: stat for identity and size, then one read of the new bytes split at newlines.
#include "engine/io/line_tailer.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <utility>

namespace normlab {

LineTailer::LineTailer(std::string path) : m_path(std::move(path)) {}

LineTailer::Poll LineTailer::poll(size_t max_bytes) {
    Poll result;
    struct stat status {};
    if (::stat(m_path.c_str(), &status) != 0) {
        result.missing = true;
        return result;
    }
    const auto size = static_cast<uint64_t>(status.st_size);
    const bool replaced = m_seen && (status.st_dev != m_device || status.st_ino != m_inode);
    if (replaced || size < m_offset) {
        result.restarted = true;
        m_offset = 0;
        m_partial.clear();
    }
    m_seen = true;
    m_device = status.st_dev;
    m_inode = status.st_ino;
    if (size == m_offset) return result;

    std::ifstream file(m_path, std::ios::binary);
    if (!file) {
        result.missing = true;
        return result;
    }
    const uint64_t wanted = std::min<uint64_t>(size - m_offset, max_bytes);
    std::string chunk(wanted, '\0');
    file.seekg(static_cast<std::streamoff>(m_offset));
    file.read(chunk.data(), static_cast<std::streamsize>(wanted));
    chunk.resize(static_cast<size_t>(file.gcount()));
    m_offset += chunk.size();
    result.more = m_offset < size;

    size_t start = 0;
    for (size_t newline = chunk.find('\n'); newline != std::string::npos; newline = chunk.find('\n', start)) {
        std::string line = m_partial.empty() ? chunk.substr(start, newline - start)
                                             : std::move(m_partial) + chunk.substr(start, newline - start);
        m_partial.clear();
        if (!line.empty() && line.back() == '\r') line.pop_back();
        result.lines.push_back(std::move(line));
        start = newline + 1;
    }
    m_partial.append(chunk, start, std::string::npos);
    return result;
}

}  // namespace normlab
