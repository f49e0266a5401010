// How the fast CPU backend splits work: one contiguous range per OpenMP thread (static, so the split
// depends only on the size and the thread count), or the calling thread alone when the work is too
// small to pay for a parallel region. Eigen products run single-threaded inside each range.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace normlab {

// Below this many multiply-adds (or element updates) a parallel region costs more than it saves.
inline constexpr int64_t kMinParallelWork = 1 << 15;

// One thread's piece of [0, count) when `team` threads share it in order; pieces start at multiples
// of `align` (except that the last one ends at count), so some threads may get an empty piece.
struct Range {
    int64_t begin = 0;
    int64_t end = 0;
    int64_t size() const { return end - begin; }
};

inline Range share(int64_t count, int thread, int team, int64_t align = 1) {
    const int64_t units = (count + align - 1) / align;
    const int64_t begin = std::min(count, units * thread / team * align);
    const int64_t end = thread + 1 == team ? count : std::min(count, units * (thread + 1) / team * align);
    return {begin, std::max(begin, end)};
}

// Runs body(thread, team) on a team of `threads` OpenMP threads, or once on the caller as
// body(0, 1) when `work` is below kMinParallelWork or a team is already running.
template <class Body>
void parallel_team(int threads, int64_t work, Body&& body) {
    if (threads <= 1 || work < kMinParallelWork || omp_in_parallel()) {
        body(0, 1);
        return;
    }
#pragma omp parallel num_threads(threads)
    body(omp_get_thread_num(), omp_get_num_threads());
}

// Calls body(thread, range) for each non-empty piece of [0, count) (see share and parallel_team).
template <class Body>
void parallel_ranges(int threads, int64_t count, int64_t work, int64_t align, Body&& body) {
    parallel_team(threads, work, [&](int thread, int team) {
        const Range range = share(count, thread, team, align);
        if (range.size() > 0) body(thread, range);
    });
}

}  // namespace normlab
