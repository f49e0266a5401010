// library_gemm.h: packing B into LIBXSMM's panels and calling its JIT kernels strip by strip. A product's
// kernels are looked up in LIBXSMM's registry (generated once per shape on first use, then found without
// allocating); a strip at C's right edge is computed in a scratch tile so the kernel shape never changes.
#include "engine/backend/cpu/library_gemm.h"

#include <libxsmm.h>

#include <algorithm>
#include <stdexcept>

namespace normlab {

namespace {
// Rows of A per kernel call: the strip (64 x depth) and the panel stay in L2 across a row of panels.
// The medium shape's forward products, 1 thread, 64-column panels: strips of 32 rows 152, of 64 rows
// 154, of 128 rows 148 GFLOP/s (a prototype, docs/performance.md).
constexpr int64_t kStripRows = 64;
// Depth steps per call: a panel's block (kDepthBlock x 64 floats, 256 KiB) stays in L2; longer sums
// (the weight gradients' batch x sequence rows) continue from C, which rounds the same.
constexpr int64_t kDepthBlock = 1024;

void initialise_once() {
    static const bool initialised = [] {
        libxsmm_init();
        return true;
    }();
    (void)initialised;
}

int64_t round_up(int64_t value, int64_t multiple) {
    return (value + multiple - 1) / multiple * multiple;
}

// The kernel for C[rows, 64] (row stride ldc) (+)= A[rows, steps] (row stride or, transposed, column
// stride a_stride) times a panel block. In LIBXSMM's column-major terms C^T = panel^T A^T: m = 64,
// n = rows, k = steps, and A transposed is its B transposed.
libxsmm_smmfunction kernel_for(int64_t rows, int64_t steps, int64_t a_stride, bool a_transposed, int64_t ldc,
                               bool load) {
    const libxsmm_blasint m = kLibraryPanel, n = rows, k = steps;
    const libxsmm_blasint lda = kLibraryPanel, ldb = a_stride, ldc_ = ldc;
    const float alpha = 1.0f, beta = load ? 1.0f : 0.0f;
    const int flags = (load ? 0 : LIBXSMM_GEMM_FLAG_BETA_0) | (a_transposed ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
    const int prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
    const libxsmm_smmfunction kernel =
        libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc_, &alpha, &beta, &flags, &prefetch);
    if (!kernel)
        throw std::runtime_error("LIBXSMM generated no kernel for a " + std::to_string(rows) + " x " +
                                 std::to_string(steps) + " strip; run with NORMLAB_GEMM=own");
    return kernel;
}

// C[rows, 64] (+)= A[rows, depth] times one panel, a depth block per call.
void multiply_strip(float* c, int64_t ldc, GemmOperand a, const float* panel, int64_t depth, int64_t rows,
                    bool load) {
    for (int64_t k0 = 0; k0 < depth; k0 += kDepthBlock) {
        const int64_t steps = std::min(kDepthBlock, depth - k0);
        const float* a_block = a.transposed ? a.data + k0 * a.stride : a.data + k0;
        kernel_for(rows, steps, a.stride, a.transposed, ldc, load || k0 > 0)(panel + k0 * kLibraryPanel,
                                                                             a_block, c);
    }
}

// Adds the bias row to `columns` columns of `rows` rows (row stride ld).
void add_bias(float* c, int64_t ld, int64_t rows, int64_t columns, const float* bias) {
    for (int64_t row = 0; row < rows; ++row)
        for (int64_t column = 0; column < columns; ++column) c[row * ld + column] += bias[column];
}
}  // namespace

bool library_gemm_available() {
    static const bool available = [] {
        initialise_once();
        const libxsmm_blasint size = kLibraryPanel;
        const float one = 1.0f;
        for (const int flags : {0, static_cast<int>(LIBXSMM_GEMM_FLAG_TRANS_B)})
            if (!libxsmm_smmdispatch(size, size, size, &size, &size, &size, &one, &one, &flags, nullptr))
                return false;
        return true;
    }();
    return available;
}

std::string library_gemm_target() {
    initialise_once();
    return libxsmm_get_target_arch();
}

bool library_gemm_fuses_multiply_add() {
    initialise_once();
    return libxsmm_get_target_archid() >= LIBXSMM_X86_AVX2;
}

void transpose_rows(float* to, int64_t to_stride, const float* from, int64_t from_stride, int64_t row_begin,
                    int64_t row_end, int64_t cols) {
    // Blocks of 32 x 32, each destination row written whole: 5x faster than 16 x 16 source-row order
    // with strides of 2048 floats (whose 16 destination lines share one L1 set).
    constexpr int64_t kBlock = 32;
    for (int64_t i0 = row_begin; i0 < row_end; i0 += kBlock) {
        const int64_t i1 = std::min(row_end, i0 + kBlock);
        for (int64_t j0 = 0; j0 < cols; j0 += kBlock) {
            const int64_t j1 = std::min(cols, j0 + kBlock);
            for (int64_t j = j0; j < j1; ++j)
                for (int64_t i = i0; i < i1; ++i) to[j * to_stride + i] = from[i * from_stride + j];
        }
    }
}

int library_gemm_vector_width() {
    initialise_once();
    const int target = libxsmm_get_target_archid();
    return target >= LIBXSMM_X86_AVX512 ? 16 : target >= LIBXSMM_X86_AVX ? 8 : 4;
}

size_t library_packed_size(int64_t depth, int64_t cols) {
    return static_cast<size_t>(depth * round_up(cols, kLibraryPanel));
}

void library_pack_columns(float* to, GemmOperand b, int64_t depth, int64_t cols, int64_t column_begin,
                          int64_t column_end) {
    initialise_once();
    for (int64_t column = column_begin; column < column_end; column += kLibraryPanel) {
        float* panel = to + column * depth;
        const int64_t valid = std::min(kLibraryPanel, cols - column);
        if (!b.transposed) {
            for (int64_t step = 0; step < depth; ++step) {
                const float* from = b.data + step * b.stride + column;
                float* out = panel + step * kLibraryPanel;
                std::copy(from, from + valid, out);
                std::fill(out + valid, out + kLibraryPanel, 0.0f);
            }
            continue;
        }
        // each column of B is a stored row; the panel's columns past B's edge are zero
        transpose_rows(panel, kLibraryPanel, b.data + column * b.stride, b.stride, 0, valid, depth);
        for (int64_t step = 0; step < depth && valid < kLibraryPanel; ++step)
            std::fill(panel + step * kLibraryPanel + valid, panel + (step + 1) * kLibraryPanel, 0.0f);
    }
}

void library_gemm_packed(float* c, int64_t ldc, GemmOperand a, PackedOperand b, int64_t rows, GemmStart start,
                         int64_t column_begin, int64_t column_end) {
    const float* bias = start.accumulate ? nullptr : start.row_bias;
    for (int64_t row0 = 0; row0 < rows; row0 += kStripRows) {
        const int64_t strip_rows = std::min(kStripRows, rows - row0);
        const GemmOperand strip{a.transposed ? a.data + row0 : a.data + row0 * a.stride, a.stride,
                                a.transposed};
        for (int64_t column = column_begin; column < column_end; column += kLibraryPanel) {
            const float* panel = b.data + column * b.depth;
            const int64_t valid = std::min(kLibraryPanel, column_end - column);
            float* out = c + row0 * ldc + column;
            if (valid == kLibraryPanel) {
                multiply_strip(out, ldc, strip, panel, b.depth, strip_rows, start.accumulate);
                if (bias) add_bias(out, ldc, strip_rows, valid, bias + column);
                continue;
            }
            // C's right edge: the whole panel into a scratch tile, then its valid columns back
            alignas(64) float tile[kStripRows * kLibraryPanel] = {};
            for (int64_t row = 0; row < strip_rows && start.accumulate; ++row)
                std::copy(out + row * ldc, out + row * ldc + valid, tile + row * kLibraryPanel);
            multiply_strip(tile, kLibraryPanel, strip, panel, b.depth, strip_rows, start.accumulate);
            if (bias) add_bias(tile, kLibraryPanel, strip_rows, valid, bias + column);
            for (int64_t row = 0; row < strip_rows; ++row)
                std::copy(tile + row * kLibraryPanel, tile + row * kLibraryPanel + valid, out + row * ldc);
        }
    }
}

}  // namespace normlab
