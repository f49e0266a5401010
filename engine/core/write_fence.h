// A fence for writers that share a folder with other processes (a sweep point's run folder): a check
// run right before each write that replaces or removes a file there, which throws WriteFenceLost once
// this process may no longer write (another worker took the point over). An empty fence always passes.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>

namespace normlab {

class WriteFenceLost : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

using WriteFence = std::function<void()>;

// Runs `fence` when there is one.
inline void check_fence(const WriteFence& fence) {
    if (fence) fence();
}

}  // namespace normlab
