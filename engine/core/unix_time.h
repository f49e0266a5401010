// The wall clock as unix seconds: what summary.json's heartbeat holds and what a reader compares it
// with to call a run stale (engine/io/run_folder_reader.h's shown_status).
#pragma once
#include <chrono>

namespace normlab {

inline double unix_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace normlab
