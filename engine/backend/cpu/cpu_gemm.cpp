// gemm(): Eigen's general_matrix_matrix_product with a blocking whose packing buffers live in a
// thread-local workspace (64-byte aligned, grown on demand), for the four operand layouts.
#include "engine/backend/cpu/cpu_gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>

#include "engine/backend/cpu/eigen_maps.h"

namespace normlab {

namespace {
using Index = Eigen::Index;

// The largest packing size any thread has needed so far.
std::atomic<size_t> g_largest_packing{0};

// Packing buffers of one thread, reused by every product it runs. A thread grows straight to the
// largest size any thread has needed, so which chunk a thread happens to claim first cannot make it
// allocate again once training has warmed up.
class PackingBuffers {
  public:
    float* reserve(size_t count) {
        size_t largest = g_largest_packing.load(std::memory_order_relaxed);
        while (count > largest && !g_largest_packing.compare_exchange_weak(largest, count)) {
        }
        count = std::max(count, largest);
        if (count > m_capacity) {
            m_capacity = std::max(count, m_capacity * 2);
            m_data.reset(
                static_cast<float*>(std::aligned_alloc(64, ((m_capacity * sizeof(float) + 63) / 64) * 64)));
        }
        return m_data.get();
    }

  private:
    struct Free {
        void operator()(float* pointer) const { std::free(pointer); }
    };
    std::unique_ptr<float, Free> m_data;
    size_t m_capacity = 0;
};

// Eigen's cache blocking for a row-major result (Eigen solves it as the transposed column-major
// product, so its m and n swap), with buffers from this thread's workspace.
class WorkspaceBlocking : public Eigen::internal::level3_blocking<float, float> {
  public:
    WorkspaceBlocking(Index rows, Index cols, Index depth) {
        this->m_mc = cols;
        this->m_nc = rows;
        this->m_kc = depth;
        Eigen::internal::computeProductBlockingSizes<float, float, 1>(this->m_kc, this->m_mc, this->m_nc,
                                                                      Index(1));
        const size_t size_a = static_cast<size_t>(this->m_kc * this->m_mc);
        const size_t size_b = static_cast<size_t>(this->m_kc * this->m_nc);
        const size_t padded_a = (size_a + 15) / 16 * 16;
        thread_local PackingBuffers buffers;
        float* block = buffers.reserve(padded_a + size_b);
        this->m_blockA = block;
        this->m_blockB = block + padded_a;
    }
};

template <int LhsOrder, int RhsOrder>
void run_gemm(float* c, int64_t ldc, GemmOperand a, GemmOperand b, int64_t rows, int64_t cols,
              int64_t depth) {
    WorkspaceBlocking blocking(rows, cols, depth);
    Eigen::internal::general_matrix_matrix_product<Index, float, LhsOrder, false, float, RhsOrder, false,
                                                   Eigen::RowMajor, 1>::run(rows, cols, depth, a.data,
                                                                            a.stride, b.data, b.stride, c, 1,
                                                                            ldc, 1.0f, blocking);
}
}  // namespace

void gemm(float* c, int64_t ldc, GemmOperand a, GemmOperand b, int64_t rows, int64_t cols, int64_t depth,
          bool accumulate) {
    if (rows <= 0 || cols <= 0) return;
    if (!accumulate) {
        for (int64_t row = 0; row < rows; ++row) std::fill(c + row * ldc, c + row * ldc + cols, 0.0f);
    }
    if (depth <= 0) return;
    constexpr int kRow = Eigen::RowMajor;
    constexpr int kColumn = Eigen::ColMajor;
    if (!a.transposed && !b.transposed) return run_gemm<kRow, kRow>(c, ldc, a, b, rows, cols, depth);
    if (!a.transposed && b.transposed) return run_gemm<kRow, kColumn>(c, ldc, a, b, rows, cols, depth);
    if (a.transposed && !b.transposed) return run_gemm<kColumn, kRow>(c, ldc, a, b, rows, cols, depth);
    run_gemm<kColumn, kColumn>(c, ldc, a, b, rows, cols, depth);
}

}  // namespace normlab
