// The register-blocked inner kernel of the fast backend's GEMM: a tile of up to kTileRows x
// kTileColumns of C held in vector registers while it accumulates A's values (read in place) times a
// packed panel of B. 6 x 64 with AVX-512, 4 x 24 with AVX2 + FMA, 4 x 12 with SSE2; see cpu_gemm.cpp.
#pragma once
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <cstdint>

namespace normlab::gemm_detail {

#if defined(__AVX512F__)
struct Vector {
    using Register = __m512;
    static constexpr int kWidth = 16;
    static Register zero() { return _mm512_setzero_ps(); }
    static Register load(const float* from) { return _mm512_loadu_ps(from); }
    static Register gather(const float* from, int32_t stride) {  // from[lane * stride]
        const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        return _mm512_i32gather_ps(_mm512_mullo_epi32(lanes, _mm512_set1_epi32(stride)), from, 4);
    }
    static Register broadcast(const float* from) { return _mm512_set1_ps(*from); }
    static Register multiply_add(Register a, Register b, Register sum) { return _mm512_fmadd_ps(a, b, sum); }
    static Register add(Register a, Register b) { return _mm512_add_ps(a, b); }
    static void store(float* to, Register value) { _mm512_storeu_ps(to, value); }
};
inline constexpr int kTileRows = 6;  // 6 x 4 accumulators + 4 B vectors + 1 broadcast of 32 registers
inline constexpr int kTileVectors =
    4;  // 64 columns: the models' widths (64, 128, 192, 256, ...) in whole tiles
#elif defined(__AVX2__) && defined(__FMA__)
struct Vector {
    using Register = __m256;
    static constexpr int kWidth = 8;
    static Register zero() { return _mm256_setzero_ps(); }
    static Register load(const float* from) { return _mm256_loadu_ps(from); }
    static Register gather(const float* from, int32_t stride) {
        const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        return _mm256_i32gather_ps(from, _mm256_mullo_epi32(lanes, _mm256_set1_epi32(stride)), 4);
    }
    static Register broadcast(const float* from) { return _mm256_broadcast_ss(from); }
    static Register multiply_add(Register a, Register b, Register sum) { return _mm256_fmadd_ps(a, b, sum); }
    static Register add(Register a, Register b) { return _mm256_add_ps(a, b); }
    static void store(float* to, Register value) { _mm256_storeu_ps(to, value); }
};
inline constexpr int kTileRows = 4;  // 4 x 3 accumulators + 3 B vectors + 1 broadcast of 16 registers
inline constexpr int kTileVectors = 3;
#elif defined(__SSE2__)
struct Vector {  // x86-64's baseline: no fused multiply-add
    using Register = __m128;
    static constexpr int kWidth = 4;
    static Register zero() { return _mm_setzero_ps(); }
    static Register load(const float* from) { return _mm_loadu_ps(from); }
    static Register gather(const float* from, int32_t stride) {
        return _mm_setr_ps(from[0], from[stride], from[2 * stride], from[3 * stride]);
    }
    static Register broadcast(const float* from) { return _mm_set1_ps(*from); }
    static Register multiply_add(Register a, Register b, Register sum) {
        return _mm_add_ps(_mm_mul_ps(a, b), sum);
    }
    static Register add(Register a, Register b) { return _mm_add_ps(a, b); }
    static void store(float* to, Register value) { _mm_storeu_ps(to, value); }
};
inline constexpr int kTileRows = 4;
inline constexpr int kTileVectors = 3;
#else
struct Vector {  // other architectures: scalar registers, left to the compiler
    using Register = float;
    static constexpr int kWidth = 1;
    static Register zero() { return 0.0f; }
    static Register load(const float* from) { return *from; }
    static Register gather(const float* from, int32_t) { return *from; }
    static Register broadcast(const float* from) { return *from; }
    static Register multiply_add(Register a, Register b, Register sum) { return a * b + sum; }
    static Register add(Register a, Register b) { return a + b; }
    static void store(float* to, Register value) { *to = value; }
};
inline constexpr int kTileRows = 4;
inline constexpr int kTileVectors = 3;
#endif

inline constexpr int kTileColumns = kTileVectors * Vector::kWidth;

// B's rows are requested this many depth steps before the tile reads them: B streams from L2 (its
// panel is not reused by the next tile) and, read in place, with a row stride the hardware prefetcher
// does not follow. `normlab-cli bench --gemm` at the medium shape, 1 thread: 4 steps +8%, 8 steps +9%,
// 16 steps -3%; 2 threads +6%, medium +3%, small +4% (interleaved pairs). Measured only with AVX-512.
#if defined(__AVX512F__)
inline constexpr int kPrefetchSteps = 8;
#else
inline constexpr int kPrefetchSteps = 0;
#endif

// Asks for the cache line `ahead` floats after `at`, which may lie past the end of the buffer: the
// address is formed as an integer, and a prefetch never faults.
inline void prefetch(const float* at, int64_t ahead) {
#if defined(__x86_64__) || defined(__i386__)
    const auto address = reinterpret_cast<uintptr_t>(at) + static_cast<uintptr_t>(ahead) * sizeof(float);
    _mm_prefetch(reinterpret_cast<const char*>(address), _MM_HINT_T0);
#else
    (void)at;
    (void)ahead;
#endif
}

// A panel of B: Vectors * kWidth floats per depth step, `step` floats apart (packed: the panel's width;
// read in place from a row-major B: its row stride).
struct Panel {
    const float* data;
    int64_t step;
};

// C[0:Rows, 0:Vectors * kWidth] (row stride ldc) = (load ? C : bias ? bias : 0) + sum over `steps` depth
// steps of A(row, step) * panel[step][column], where A(row, step) is a[row * a_stride + step] when
// kDepthContiguous (a row-major A) and a[step * a_stride + row] otherwise (a transposed one). Each
// element's sum runs over depth in order, one fused multiply-add per step, so its value does not depend
// on the tile that computed it.
template <int Rows, int Vectors, bool kDepthContiguous>
void multiply_tile(int64_t steps, const float* a, int64_t a_stride, Panel b_panel, float* c, int64_t ldc,
                   bool load, const float* bias) {
    using Register = Vector::Register;
    const float* panel = b_panel.data;
    const int64_t row_step = kDepthContiguous ? a_stride : 1;
    const int64_t depth_step = kDepthContiguous ? 1 : a_stride;
    Register sums[Rows][Vectors];
#pragma GCC unroll 16
    for (int row = 0; row < Rows; ++row) {
#pragma GCC unroll 4
        for (int part = 0; part < Vectors; ++part) sums[row][part] = Vector::zero();
    }
    for (int64_t step = 0; step < steps; ++step) {
        if constexpr (kPrefetchSteps > 0) {
#pragma GCC unroll 4
            for (int part = 0; part < Vectors; ++part)
                prefetch(panel, kPrefetchSteps * b_panel.step + part * Vector::kWidth);
        }
        Register b[Vectors];
#pragma GCC unroll 4
        for (int part = 0; part < Vectors; ++part) b[part] = Vector::load(panel + part * Vector::kWidth);
#pragma GCC unroll 16
        for (int row = 0; row < Rows; ++row) {
            const Register value = Vector::broadcast(a + row * row_step);
#pragma GCC unroll 4
            for (int part = 0; part < Vectors; ++part)
                sums[row][part] = Vector::multiply_add(value, b[part], sums[row][part]);
        }
        a += depth_step;
        panel += b_panel.step;
    }
#pragma GCC unroll 16
    for (int row = 0; row < Rows; ++row) {
#pragma GCC unroll 4
        for (int part = 0; part < Vectors; ++part) {
            float* to = c + row * ldc + part * Vector::kWidth;
            const float* start = load ? to : bias ? bias + part * Vector::kWidth : nullptr;
            Vector::store(to, start ? Vector::add(Vector::load(start), sums[row][part]) : sums[row][part]);
        }
    }
}

}  // namespace normlab::gemm_detail
