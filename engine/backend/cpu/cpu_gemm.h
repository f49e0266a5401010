// The fast backend's matrix product: Eigen's single-threaded GEMM kernel (packing + gebp) called with
// packing buffers from a per-thread workspace that only grows, so products allocate nothing in the
// steady state (Eigen itself takes blocks over 128 KiB from the heap on every call).
#pragma once
#include <cstdint>

namespace normlab {

// One GEMM operand: a row-major matrix, or the transpose of one, with its row stride (in floats).
struct GemmOperand {
    const float* data;
    int64_t stride;
    bool transposed = false;
};

// C[rows, cols] (row-major, row stride ldc) = A B, or += A B when accumulate; A is [rows, depth] and
// B is [depth, cols] as seen after their transposes.
void gemm(float* c, int64_t ldc, GemmOperand a, GemmOperand b, int64_t rows, int64_t cols, int64_t depth,
          bool accumulate);

}  // namespace normlab
