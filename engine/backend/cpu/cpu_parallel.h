// How the fast CPU backend splits work: fixed chunks (two per thread, four for large products) that
// the task pool's threads claim dynamically, so a thread the OS has descheduled (a busy GUI thread or
// another process on the same cores) leaves its chunks to the others instead of stalling the op; small
// ops stay on the caller. Chunk bounds depend only on the size and the thread count: deterministic.
#pragma once
#include <algorithm>
#include <cstdint>

#include "engine/backend/cpu/cpu_task_pool.h"

namespace normlab {

// Below this many multiply-adds (or element updates) a parallel region costs more than it saves.
inline constexpr int64_t kMinParallelWork = 1 << 15;
// Chunks per thread: a chunk costs a claim, and the last chunk claimed leaves the other threads idle
// until it ends, so large ops (products of at least kFineWork multiply-adds) get smaller chunks.
// `bench`, interleaved pairs, 2 threads, 4 chunks per thread for every op: small +2-5%, medium +0-4%,
// deep -1-2% (its ops are small); 4 only from kFineWork up keeps deep's and tiny's ops as they were.
inline constexpr int kChunksPerThread = 2;
inline constexpr int kFineChunksPerThread = 4;
inline constexpr int64_t kFineWork = int64_t{1} << 24;

// Piece `index` of [0, count) cut into `pieces` in order; pieces start at multiples of `align` (the
// last one ends at count), so some may be empty.
struct Range {
    int64_t begin = 0;
    int64_t end = 0;
    int64_t size() const { return end - begin; }
};

inline Range share(int64_t count, int index, int pieces, int64_t align = 1) {
    const int64_t units = (count + align - 1) / align;
    const int64_t begin = std::min(count, units * index / pieces * align);
    const int64_t end = index + 1 == pieces ? count : std::min(count, units * (index + 1) / pieces * align);
    return {begin, std::max(begin, end)};
}

// How many chunks an op of `count` items (in multiples of `align`) and total cost `work` is cut into:
// 1 (run on the caller) when the work is small or one thread is asked for.
inline int chunk_count(int threads, int64_t count, int64_t work, int64_t align) {
    if (threads <= 1 || work < kMinParallelWork) return 1;
    const int64_t units = (count + align - 1) / align;
    const int64_t per_thread = work >= kFineWork ? kFineChunksPerThread : kChunksPerThread;
    return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(units, per_thread * threads)));
}

// Calls body(chunk, range) for each non-empty chunk of [0, count), chunks as chunk_count says.
template <class Body>
void parallel_chunks(TaskPool& pool, int chunks, int64_t count, int64_t align, Body&& body) {
    pool.run(chunks, [&](int chunk) {
        const Range range = share(count, chunk, chunks, align);
        if (range.size() > 0) body(chunk, range);
    });
}

template <class Body>
void parallel_ranges(TaskPool& pool, int64_t count, int64_t work, int64_t align, Body&& body) {
    parallel_chunks(pool, chunk_count(pool.threads(), count, work, align), count, align, body);
}

}  // namespace normlab
