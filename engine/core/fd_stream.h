// An std::ostream buffer over a POSIX file descriptor that checks every write(2): a short or failed
// write (disk full, file size limit) is remembered with its errno instead of being lost in a stream
// state, so the atomic writer can refuse to rename a file that was not written whole.
#pragma once
#include <streambuf>

namespace normlab {

class FdStreamBuffer : public std::streambuf {
  public:
    explicit FdStreamBuffer(int fd);
    // 0 while every write succeeded; else the errno of the first failure.
    int error() const { return m_error; }

  protected:
    int_type overflow(int_type c) override;
    int sync() override;
    std::streamsize xsputn(const char* data, std::streamsize count) override;

  private:
    bool drain();
    bool write_all(const char* data, size_t count);

    int m_fd;
    int m_error = 0;
    char m_buffer[1 << 16];
};

}  // namespace normlab
