// FdStreamBuffer: a 64 KB buffer drained by write(2) loops that retry EINTR and short writes, and
// large writes (a checkpoint's tensors) passed straight through.
#include "engine/core/fd_stream.h"

#include <unistd.h>

#include <cerrno>

namespace normlab {

FdStreamBuffer::FdStreamBuffer(int fd) : m_fd(fd) {
    setp(m_buffer, m_buffer + sizeof m_buffer);
}

bool FdStreamBuffer::write_all(const char* data, size_t count) {
    while (count > 0 && m_error == 0) {
        const ssize_t written = ::write(m_fd, data, count);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) {
            m_error = written < 0 ? errno : ENOSPC;
            break;
        }
        data += written;
        count -= static_cast<size_t>(written);
    }
    return m_error == 0;
}

bool FdStreamBuffer::drain() {
    const bool ok = write_all(pbase(), static_cast<size_t>(pptr() - pbase()));
    setp(m_buffer, m_buffer + sizeof m_buffer);
    return ok;
}

FdStreamBuffer::int_type FdStreamBuffer::overflow(int_type c) {
    if (!drain()) return traits_type::eof();
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
    return c;
}

int FdStreamBuffer::sync() {
    return drain() ? 0 : -1;
}

std::streamsize FdStreamBuffer::xsputn(const char* data, std::streamsize count) {
    if (count < epptr() - pptr()) return std::streambuf::xsputn(data, count);
    if (!drain() || !write_all(data, static_cast<size_t>(count))) return 0;
    return count;
}

}  // namespace normlab
