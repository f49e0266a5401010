// gemm(): B packed into panels of kTileColumns columns per depth block (or read in place when its rows
// hold whole vectors); for each depth block and each strip of kTileRows rows of A (read in place, so it
// stays in L1), a register tile per panel (gemm_microkernel.h). Packing scratch comes from the caller.
#include "engine/backend/cpu/cpu_gemm.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>

#include "engine/backend/cpu/gemm_microkernel.h"
#include "engine/backend/cpu/library_gemm.h"
#include "engine/core/errors.h"

namespace normlab {

namespace {
using gemm_detail::Vector;
constexpr int64_t kTileRows = gemm_detail::kTileRows;
constexpr int64_t kTileColumns = gemm_detail::kTileColumns;
constexpr int64_t kTileVectors = gemm_detail::kTileVectors;
constexpr int64_t kWidth = Vector::kWidth;
// Depth steps per block: A's strip (kTileRows x kDepthBlock, 3 KiB) stays in L1 while B's block
// (kDepthBlock x cols) streams from L2. `normlab-cli bench --gemm` at the medium shape, 2 threads:
// 64: 229, 128: 247, 256: 238, 512: 228 GFLOP/s.
constexpr int64_t kDepthBlock = 128;

int64_t round_up(int64_t value, int64_t multiple) {
    return (value + multiple - 1) / multiple * multiple;
}

// Width in floats of the panel that starts at `column` (full panels, then a narrower last one).
int64_t panel_width(int64_t cols, int64_t column) {
    return std::min(kTileColumns, round_up(cols - column, kWidth));
}

// Where depth block `k0` (of `steps` steps) and its panel at `column` start in packed B.
int64_t panel_offset(int64_t cols, int64_t k0, int64_t steps, int64_t column) {
    return k0 * round_up(cols, kWidth) + column * steps;
}

using gemm_detail::Panel;
using TileKernel = void (*)(int64_t, const float*, int64_t, Panel, float*, int64_t, bool, const float*);

// kernels[depth contiguous][rows - 1][vectors - 1]
template <bool kDepthContiguous, int kRows, size_t... kVectors>
constexpr std::array<TileKernel, kTileVectors> kernels_of_rows(std::index_sequence<kVectors...>) {
    return {gemm_detail::multiply_tile<kRows, static_cast<int>(kVectors) + 1, kDepthContiguous>...};
}
template <bool kDepthContiguous, size_t... kRows>
constexpr auto kernel_rows(std::index_sequence<kRows...>) {
    return std::array<std::array<TileKernel, kTileVectors>, sizeof...(kRows)>{
        {kernels_of_rows<kDepthContiguous, static_cast<int>(kRows) + 1>(
            std::make_index_sequence<kTileVectors>())...}};
}
constexpr auto kTransposedKernels = kernel_rows<false>(std::make_index_sequence<kTileRows>());
constexpr auto kRowMajorKernels = kernel_rows<true>(std::make_index_sequence<kTileRows>());

// One tile whose last vector runs past C's edge: computed into a scratch tile, then added to its start
// element by element, so edge elements get exactly the arithmetic of inner ones.
void multiply_edge_tile(TileKernel kernel, int64_t steps, const float* a, int64_t a_stride, Panel panel,
                        float* c, int64_t ldc, int64_t rows, int64_t columns, bool load, const float* bias) {
    alignas(64) float tile[kTileRows * kTileColumns];
    kernel(steps, a, a_stride, panel, tile, kTileColumns, false, nullptr);
    for (int64_t row = 0; row < rows; ++row) {
        float* out = c + row * ldc;
        const float* start = load ? out : bias;
        const float* sums = tile + row * kTileColumns;
        for (int64_t column = 0; column < columns; ++column)
            out[column] = start ? start[column] + sums[column] : sums[column];
    }
}
}  // namespace

GemmKernel linear_gemm_kernel_from_environment() {
    const char* chosen = std::getenv("NORMLAB_GEMM");
    if (chosen && *chosen && std::string(chosen) != "library" && std::string(chosen) != "own")
        throw InputError("NORMLAB_GEMM=" + std::string(chosen) + " is not a GEMM kernel; use library or own");
    const bool own = chosen && std::string(chosen) == "own";
    return own || !library_gemm_available() ? GemmKernel::own : GemmKernel::library;
}

GemmKernel own_kernel_if_as_wide(GemmKernel asked) {
    if (asked == GemmKernel::own || kWidth >= library_gemm_vector_width()) return GemmKernel::own;
    return GemmKernel::library;
}

bool readable_in_place(GemmOperand b, int64_t cols, GemmKernel kernel) {
    return kernel == GemmKernel::own && !b.transposed && cols % kWidth == 0;
}

size_t packed_size(int64_t depth, int64_t cols, GemmKernel kernel) {
    if (kernel == GemmKernel::library) return library_packed_size(depth, cols);
    return static_cast<size_t>(depth * round_up(cols, kWidth));
}

int64_t pack_column_align(GemmKernel kernel) {
    return kernel == GemmKernel::library ? kLibraryPanel : kTileColumns;
}

void pack_columns(float* to, GemmOperand b, int64_t depth, int64_t cols, int64_t column_begin,
                  int64_t column_end, GemmKernel kernel) {
    if (kernel == GemmKernel::library)
        return library_pack_columns(to, b, depth, cols, column_begin, column_end);
    for (int64_t k0 = 0; k0 < depth; k0 += kDepthBlock) {
        const int64_t steps = std::min(kDepthBlock, depth - k0);
        for (int64_t column = column_begin; column < column_end; column += kTileColumns) {
            const int64_t width = panel_width(cols, column);
            const int64_t valid = std::min(width, cols - column);
            float* panel = to + panel_offset(cols, k0, steps, column);
            if (!b.transposed) {  // B's row at each depth step is contiguous
                for (int64_t step = 0; step < steps; ++step) {
                    const float* from = b.data + (k0 + step) * b.stride + column;
                    float* out = panel + step * width;
                    if (valid == width) {
                        for (int64_t part = 0; part < width; part += kWidth)
                            Vector::store(out + part, Vector::load(from + part));
                    } else {
                        std::copy(from, from + valid, out);
                        std::fill(out + valid, out + width, 0.0f);
                    }
                }
                continue;
            }
            // Each column of B is a row of the stored matrix: gather a vector's worth per step, or (at
            // the edge) copy element by element.
            if (valid == width && b.stride <= std::numeric_limits<int32_t>::max() / kWidth) {
                const auto stride = static_cast<int32_t>(b.stride);
                for (int64_t step = 0; step < steps; ++step) {
                    const float* from = b.data + column * b.stride + k0 + step;
                    for (int64_t part = 0; part < width; part += kWidth)
                        Vector::store(panel + step * width + part,
                                      Vector::gather(from + part * b.stride, stride));
                }
                continue;
            }
            for (int64_t j = 0; j < width; ++j) {
                if (j >= valid) {
                    for (int64_t step = 0; step < steps; ++step) panel[step * width + j] = 0.0f;
                    continue;
                }
                const float* from = b.data + (column + j) * b.stride + k0;
                for (int64_t step = 0; step < steps; ++step) panel[step * width + j] = from[step];
            }
        }
    }
}

void gemm_packed(float* c, int64_t ldc, GemmOperand a, PackedOperand b, int64_t rows, GemmStart start,
                 int64_t column_begin, int64_t column_end) {
    const int64_t cols = b.cols;
    if (column_end < 0) column_end = cols;
    if (rows <= 0 || column_end <= column_begin) return;
    if (b.depth <= 0) {
        for (int64_t row = 0; !start.accumulate && row < rows; ++row) {
            float* out = c + row * ldc;
            for (int64_t column = column_begin; column < column_end; ++column)
                out[column] = start.row_bias ? start.row_bias[column] : 0.0f;
        }
        return;
    }
    if (b.kernel == GemmKernel::library)
        return library_gemm_packed(c, ldc, a, b, rows, start, column_begin, column_end);
    const auto& kernels = a.transposed ? kTransposedKernels : kRowMajorKernels;
    for (int64_t k0 = 0; k0 < b.depth; k0 += kDepthBlock) {
        const int64_t steps = std::min(kDepthBlock, b.depth - k0);
        const bool load = start.accumulate || k0 > 0;
        const float* bias = load ? nullptr : start.row_bias;
        for (int64_t row0 = 0; row0 < rows; row0 += kTileRows) {
            const int64_t tile_rows = std::min(kTileRows, rows - row0);
            const float* strip = a.transposed ? a.data + k0 * a.stride + row0 : a.data + row0 * a.stride + k0;
            for (int64_t column = column_begin; column < column_end; column += kTileColumns) {
                const int64_t width = panel_width(cols, column);
                const Panel panel = b.in_place_stride > 0
                                        ? Panel{b.data + k0 * b.in_place_stride + column, b.in_place_stride}
                                        : Panel{b.data + panel_offset(cols, k0, steps, column), width};
                const TileKernel kernel = kernels[tile_rows - 1][width / kWidth - 1];
                float* out = c + row0 * ldc + column;
                const float* column_bias = bias ? bias + column : nullptr;
                if (column + width <= column_end)
                    kernel(steps, strip, a.stride, panel, out, ldc, load, column_bias);
                else
                    multiply_edge_tile(kernel, steps, strip, a.stride, panel, out, ldc, tile_rows,
                                       column_end - column, load, column_bias);
            }
        }
    }
}

void gemm(float* c, int64_t ldc, GemmOperand a, GemmOperand b, int64_t rows, int64_t cols, int64_t depth,
          bool accumulate, float* scratch, GemmKernel kernel) {
    if (rows <= 0 || cols <= 0) return;
    if (readable_in_place(b, cols, kernel)) {
        gemm_packed(c, ldc, a, {b.data, depth, cols, b.stride}, rows, {.accumulate = accumulate});
        return;
    }
    pack_columns(scratch, b, depth, cols, 0, cols, kernel);
    gemm_packed(c, ldc, a, {scratch, depth, cols, 0, kernel}, rows, {.accumulate = accumulate});
}

}  // namespace normlab
