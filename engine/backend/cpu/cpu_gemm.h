// The fast backend's matrix product: NormLab's own single-threaded cache-blocked GEMM (B packed into
// column panels, A read in place, register tiles; cpu_gemm.cpp). Callers split rows across threads and
// can pack a shared B once for all of them; every buffer comes from the caller, so nothing allocates.
#pragma once
#include <cstddef>
#include <cstdint>

namespace normlab {

// One GEMM operand: a row-major matrix, or the transpose of one, with its row stride (in floats).
struct GemmOperand {
    const float* data;
    int64_t stride;
    bool transposed = false;
};

// B [depth, cols] (as seen after its transpose) packed into the panels gemm_packed() reads, or (with
// in_place_stride > 0) a row-major B whose cols are a multiple of the vector width, read where it is.
struct PackedOperand {
    const float* data;
    int64_t depth;
    int64_t cols;
    int64_t in_place_stride = 0;
};

// Whether gemm_packed() can read B (`cols` wide, as the product sees it) where it is: row-major with
// whole vectors in every row. Such a B is passed as a PackedOperand with in_place_stride set.
bool readable_in_place(GemmOperand b, int64_t cols);

// Packed B's size in floats, and the column multiple that pack ranges must start on.
size_t packed_size(int64_t depth, int64_t cols);
int64_t pack_column_align();

// Packs columns [column_begin, column_end) of B (column_begin a multiple of pack_column_align(), or
// the whole B in one call) into `to`, which holds packed_size(depth, cols) floats; ranges that
// cover [0, cols) may be packed by different threads.
void pack_columns(float* to, GemmOperand b, int64_t depth, int64_t cols, int64_t column_begin,
                  int64_t column_end);

// What C starts from: itself (C += A B), or zero (C = A B), or a row added to every row (C = bias + A B).
struct GemmStart {
    bool accumulate = false;
    const float* row_bias = nullptr;  // only read when not accumulating
};

// C[rows, b.cols] (row-major, row stride ldc) = start + A B; A is [rows, b.depth] as seen after its
// transpose. Only C's columns [column_begin, column_end) are computed (column_begin a multiple of
// pack_column_align()); c and row_bias point at column 0 either way.
void gemm_packed(float* c, int64_t ldc, GemmOperand a, PackedOperand b, int64_t rows, GemmStart start,
                 int64_t column_begin = 0, int64_t column_end = -1);

// The same for a B that is packed here (into `scratch`, which holds packed_size(depth, cols) floats)
// when it must be: transposed, or with rows that end in part of a vector; otherwise B is read in place.
void gemm(float* c, int64_t ldc, GemmOperand a, GemmOperand b, int64_t rows, int64_t cols, int64_t depth,
          bool accumulate, float* scratch);

}  // namespace normlab
