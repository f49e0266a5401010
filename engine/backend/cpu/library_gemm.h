// LIBXSMM's JIT-generated kernels (Debian's libxsmm-dev) behind cpu_gemm.h: B packed into zero-padded
// panels of kLibraryPanel columns, each [depth, kLibraryPanel] and contiguous, one kernel call per panel
// and strip of up to 64 rows of A. Each element of C is its start (zero or its own value) + the sum over
// depth in order, one fused multiply-add a step (a multiply and an add without FMA), then + the bias row
// if there is one, whatever the row split or thread count.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/backend/cpu/cpu_gemm.h"

namespace normlab {

inline constexpr int64_t kLibraryPanel = 64;

// Where LIBXSMM's kernels run from: the instruction set it generates code for on this CPU (its own
// runtime dispatch; LIBXSMM_TARGET=hsw, snb, wsm forces AVX2, AVX, SSE), e.g. "cpx" or "hsw".
std::string library_gemm_target();
// Whether LIBXSMM generates kernels here (both layouts of A): not on a CPU it has no code generator for,
// nor with LIBXSMM_TARGET=generic, nor where the system refuses executable memory.
bool library_gemm_available();
// Whether that target fuses multiply and add (AVX2 and later), and its vector width in floats.
bool library_gemm_fuses_multiply_add();
int library_gemm_vector_width();

// to[j * to_stride + i] = from[i * from_stride + j] for rows i in [row_begin, row_end) and j in [0, cols),
// in cache-sized blocks: how A reaches the library's kernels when a product wants it transposed (they
// read it untransposed about 20% faster), and how a transposed B is packed.
void transpose_rows(float* to, int64_t to_stride, const float* from, int64_t from_stride, int64_t row_begin,
                    int64_t row_end, int64_t cols);

size_t library_packed_size(int64_t depth, int64_t cols);
void library_pack_columns(float* to, GemmOperand b, int64_t depth, int64_t cols, int64_t column_begin,
                          int64_t column_end);
// cpu_gemm.h's gemm_packed() for a B packed by library_pack_columns() (depth > 0, rows > 0).
void library_gemm_packed(float* c, int64_t ldc, GemmOperand a, PackedOperand b, int64_t rows, GemmStart start,
                         int64_t column_begin, int64_t column_end);

}  // namespace normlab
