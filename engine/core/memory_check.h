// A guard against asking for more memory than the machine has: estimates are checked against
// MemAvailable before large allocations, so a too-large model is a clear error, not an OOM kill.
#pragma once
#include <cstddef>
#include <string>

namespace normlab {

// Bytes of memory the OS reports as available (MemAvailable), or 0 when unknown.
size_t available_memory_bytes();

// Throws ResourceError when `bytes` exceeds the available memory; `what` names the request.
void check_memory(size_t bytes, const std::string& what);

}  // namespace normlab
