// The fast backend's matrix product, single-threaded: NormLab's own cache-blocked GEMM (B packed into
// column panels, A read in place, register tiles; cpu_gemm.cpp) or LIBXSMM's JIT kernels over B packed
// its way (library_gemm.cpp). Callers split rows across threads and can pack a shared B once for all of
// them; every buffer comes from the caller, so nothing allocates.
#pragma once
#include <cstddef>
#include <cstdint>

namespace normlab {

// Which kernel computes a product: NormLab's own, or the library's (library_gemm.h). A B packed for one
// is read only by that one, so the choice travels with the packed operand.
enum class GemmKernel { own, library };
// The fast backend's kernel for linear layers: the library's, unless NORMLAB_GEMM=own asks for NormLab's
// (for comparison) or the library generates no kernels here (library_gemm_available()); InputError for
// another value of NORMLAB_GEMM.
GemmKernel linear_gemm_kernel_from_environment();
// The kernel for the products NormLab's own does better when it is as wide (A transposed, as in weight
// gradients: LIBXSMM's are 20-35% slower; attention's 32-64 column heads, which the library's 64-column
// panels would pad): NormLab's where `asked` is own or where it was compiled for vectors as wide as the
// library's target, else the library's (a portable build's SSE kernel gives way to code for this CPU).
GemmKernel own_kernel_if_as_wide(GemmKernel asked);

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
    GemmKernel kernel = GemmKernel::own;
};

// Whether gemm_packed() can read B (`cols` wide, as the product sees it) where it is: row-major with
// whole vectors in every row. Such a B is passed as a PackedOperand with in_place_stride set.
// The library's kernels always read B packed.
bool readable_in_place(GemmOperand b, int64_t cols, GemmKernel kernel = GemmKernel::own);

// Packed B's size in floats, and the column multiple that pack ranges must start on.
size_t packed_size(int64_t depth, int64_t cols, GemmKernel kernel = GemmKernel::own);
int64_t pack_column_align(GemmKernel kernel = GemmKernel::own);

// Packs columns [column_begin, column_end) of B (column_begin a multiple of pack_column_align(), or
// the whole B in one call) into `to`, which holds packed_size(depth, cols) floats; ranges that
// cover [0, cols) may be packed by different threads.
void pack_columns(float* to, GemmOperand b, int64_t depth, int64_t cols, int64_t column_begin,
                  int64_t column_end, GemmKernel kernel = GemmKernel::own);

// What C starts from: itself (C += A B), or zero (C = A B), or a row added to every row (C = bias + A B).
struct GemmStart {
    bool accumulate = false;
    const float* row_bias = nullptr;  // only read when not accumulating
};

// C[rows, b.cols] (row-major, row stride ldc) = start + A B; A is [rows, b.depth] as seen after its
// transpose. Only C's columns [column_begin, column_end) are computed (column_begin a multiple of
// pack_column_align()); c and row_bias point at column 0 either way. b.kernel computes it.
void gemm_packed(float* c, int64_t ldc, GemmOperand a, PackedOperand b, int64_t rows, GemmStart start,
                 int64_t column_begin = 0, int64_t column_end = -1);

// The same for a B that is packed here (into `scratch`, which holds packed_size(depth, cols) floats)
// when it must be: transposed, or with rows that end in part of a vector; otherwise B is read in place.
void gemm(float* c, int64_t ldc, GemmOperand a, GemmOperand b, int64_t rows, int64_t cols, int64_t depth,
          bool accumulate, float* scratch, GemmKernel kernel = GemmKernel::own);

}  // namespace normlab
