// fma_peak.h: one loop per instruction set, each compiled for its target with GCC's target attribute and
// picked with __builtin_cpu_supports, so a portable build measures the machine, not its compile flags.
// Sixteen accumulators cover the FMA latency times the two FMA ports of current cores.
#include "engine/backend/cpu/fma_peak.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace normlab {

namespace {
constexpr int kChains = 16;
constexpr long kRoundsPerCheck = 1 << 16;  // FMA rounds between looks at the clock

using Clock = std::chrono::steady_clock;

// Each variant runs rounds of kChains independent chains until `until` and returns how many; `sink`
// keeps the results alive so nothing is optimised away.
#if defined(__x86_64__)
__attribute__((target("avx512f"))) long avx512_rounds(Clock::time_point until, float* sink) {
    __m512 sum[kChains];
    for (int c = 0; c < kChains; ++c) sum[c] = _mm512_set1_ps(static_cast<float>(c) * 1e-3f);
    const __m512 scale = _mm512_set1_ps(0.999999f), shift = _mm512_set1_ps(1e-7f);
    long rounds = 0;
    while (Clock::now() < until) {
        for (long i = 0; i < kRoundsPerCheck; ++i)
#pragma GCC unroll 16
            for (int c = 0; c < kChains; ++c) sum[c] = _mm512_fmadd_ps(sum[c], scale, shift);
        rounds += kRoundsPerCheck;
    }
    for (int c = 0; c < kChains; ++c) *sink += _mm512_reduce_add_ps(sum[c]);
    return rounds;
}

__attribute__((target("avx2,fma"))) long avx2_rounds(Clock::time_point until, float* sink) {
    __m256 sum[kChains];
    for (int c = 0; c < kChains; ++c) sum[c] = _mm256_set1_ps(static_cast<float>(c) * 1e-3f);
    const __m256 scale = _mm256_set1_ps(0.999999f), shift = _mm256_set1_ps(1e-7f);
    long rounds = 0;
    while (Clock::now() < until) {
        for (long i = 0; i < kRoundsPerCheck; ++i)
#pragma GCC unroll 16
            for (int c = 0; c < kChains; ++c) sum[c] = _mm256_fmadd_ps(sum[c], scale, shift);
        rounds += kRoundsPerCheck;
    }
    alignas(32) float lanes[8];
    for (int c = 0; c < kChains; ++c) {
        _mm256_store_ps(lanes, sum[c]);
        for (float lane : lanes) *sink += lane;
    }
    return rounds;
}
#endif

// The baseline: 4-wide multiply then add, counted as 2 FLOPs a lane like an FMA.
long baseline_rounds(Clock::time_point until, float* sink) {
    float sum[kChains][4];
    for (int c = 0; c < kChains; ++c)
        for (int lane = 0; lane < 4; ++lane) sum[c][lane] = static_cast<float>(c + lane) * 1e-3f;
    long rounds = 0;
    while (Clock::now() < until) {
        for (long i = 0; i < kRoundsPerCheck; ++i)
#pragma GCC unroll 16
            for (int c = 0; c < kChains; ++c)
                for (int lane = 0; lane < 4; ++lane) sum[c][lane] = sum[c][lane] * 0.999999f + 1e-7f;
        rounds += kRoundsPerCheck;
    }
    for (int c = 0; c < kChains; ++c)
        for (int lane = 0; lane < 4; ++lane) *sink += sum[c][lane];
    return rounds;
}

struct Variant {
    long (*rounds)(Clock::time_point, float*);
    int lanes;
    const char* name;
};

Variant widest_variant() {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return {avx512_rounds, 16, "AVX-512"};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return {avx2_rounds, 8, "AVX2 + FMA"};
#endif
    return {baseline_rounds, 4, "SSE"};
}
}  // namespace

FmaPeak measure_fma_peak(int threads, double seconds) {
    const Variant variant = widest_variant();
    std::vector<double> rates(static_cast<size_t>(threads), 0.0);
    std::vector<float> sinks(static_cast<size_t>(threads), 0.0f);
    std::atomic<int> ready{0};
    auto work = [&](int index) {
        ready.fetch_add(1);
        while (ready.load() < threads) std::this_thread::yield();  // start together
        const auto start = Clock::now();
        const auto until =
            start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
        const long rounds = variant.rounds(until, &sinks[static_cast<size_t>(index)]);
        const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        rates[static_cast<size_t>(index)] =
            2.0 * variant.lanes * kChains * static_cast<double>(rounds) / elapsed;
    };
    std::vector<std::thread> workers;
    for (int index = 1; index < threads; ++index) workers.emplace_back(work, index);
    work(0);
    for (std::thread& worker : workers) worker.join();
    double total = 0.0;
    for (double rate : rates) total += rate;
    return {total / 1e9, variant.name, threads};
}

}  // namespace normlab
