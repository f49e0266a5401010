// Reads MemAvailable from /proc/meminfo and turns an impossible allocation into a ResourceError.
// The message names the request and the config keys that shrink it.
#include "engine/core/memory_check.h"

#include <fstream>
#include <sstream>

#include "engine/core/errors.h"

namespace normlab {

size_t available_memory_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    size_t kilobytes = 0;
    std::string unit;
    while (meminfo >> key >> kilobytes >> unit) {
        if (key == "MemAvailable:") return kilobytes * 1024;
    }
    return 0;
}

void check_memory(size_t bytes, const std::string& what) {
    const size_t available = available_memory_bytes();
    if (available != 0 && bytes > available) {
        std::ostringstream message;
        message << what << " would need " << (bytes >> 20) << " MiB but only " << (available >> 20)
                << " MiB of memory is available; reduce model.d_model, model.layers, model.d_ff, "
                   "model.seq_len or train.batch_size";
        throw ResourceError(message.str());
    }
}

}  // namespace normlab
