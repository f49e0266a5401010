// The fast backend's GEMM kernels (cpu_gemm.h: NormLab's own and LIBXSMM's) against a double-precision
// product: every operand layout, sizes around the register tile and the depth block (edges, one row, one
// column), strides wider than the matrix, accumulation, column sub-ranges, B packed in pieces, and
// tile-independent rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "engine/backend/cpu/cpu_gemm.h"
#include "tests/engine/gradient_check.h"

namespace normlab {
namespace {

using testing::random_tensor;
using Floats = std::vector<float>;
constexpr GemmKernel kKernels[] = {GemmKernel::own, GemmKernel::library};

const char* kernel_name(GemmKernel kernel) {
    return kernel == GemmKernel::own ? "own kernel" : "library kernel";
}

// A stored matrix for an operand seen as [rows, cols]: row-major, or the transpose of a row-major
// [cols, rows] one, with `padding` unused floats at the end of each stored row.
struct Stored {
    Floats values;
    GemmOperand operand;
    int64_t rows, cols;

    Stored(int64_t rows_, int64_t cols_, bool transposed, int64_t padding, uint64_t seed)
        : rows(rows_), cols(cols_) {
        const int64_t stored_rows = transposed ? cols : rows;
        const int64_t stride = (transposed ? rows : cols) + padding;
        values = random_tensor(static_cast<size_t>(std::max<int64_t>(1, stored_rows * stride)), seed);
        operand = {values.data(), stride, transposed};
    }
    double at(int64_t row, int64_t col) const {
        return operand.transposed ? values[col * operand.stride + row] : values[row * operand.stride + col];
    }
};

// C (row stride ldc) = initial + A B in double precision.
std::vector<double> reference(const Stored& a, const Stored& b, const Floats& initial, int64_t ldc) {
    std::vector<double> c(initial.begin(), initial.end());
    for (int64_t i = 0; i < a.rows; ++i)
        for (int64_t j = 0; j < b.cols; ++j) {
            double sum = 0.0;
            for (int64_t k = 0; k < a.cols; ++k) sum += a.at(i, k) * b.at(k, j);
            c[i * ldc + j] += sum;
        }
    return c;
}

// Every element within float rounding of a depth-long sum of products of unit normals; the padding
// after each row keeps its initial values.
void expect_product(const std::vector<double>& expected, const Floats& actual, int64_t rows, int64_t cols,
                    int64_t ldc, int64_t depth, const Floats& initial, const char* what) {
    const double tolerance = 1e-6 * (1.0 + static_cast<double>(depth));  // float rounding, depth terms
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < ldc; ++j) {
            const size_t at = static_cast<size_t>(i * ldc + j);
            if (j >= cols) {
                ASSERT_EQ(actual[at], initial[at]) << what << ": wrote past column " << cols;
                continue;
            }
            ASSERT_NEAR(actual[at], expected[at], tolerance) << what << " at (" << i << ", " << j << ")";
        }
}

using Shape = std::tuple<int, int, int>;  // rows, cols, depth

class Gemm : public ::testing::TestWithParam<Shape> {};

TEST_P(Gemm, MatchesDoublePrecisionForEveryLayout) {
    const auto [rows, cols, depth] = GetParam();
    for (const GemmKernel kernel : kKernels)
        for (const bool a_transposed : {false, true})
            for (const bool b_transposed : {false, true})
                for (const bool accumulate : {false, true}) {
                    const Stored a(rows, depth, a_transposed, 3, 11);
                    const Stored b(depth, cols, b_transposed, 5, 12);
                    const int64_t ldc = cols + 7;
                    const Floats initial = random_tensor(static_cast<size_t>(rows * ldc), 13);
                    Floats c = initial;
                    Floats scratch(packed_size(depth, cols, kernel));
                    gemm(c.data(), ldc, a.operand, b.operand, rows, cols, depth, accumulate, scratch.data(),
                         kernel);
                    const Floats start = accumulate ? initial : Floats(initial.size(), 0.0f);
                    const std::vector<double> expected = reference(a, b, start, ldc);
                    const std::string what = std::string(kernel_name(kernel)) + ": A" +
                                             (a_transposed ? "^T" : "") + " B" + (b_transposed ? "^T" : "") +
                                             (accumulate ? " +=" : " =");
                    expect_product(expected, c, rows, cols, ldc, depth, initial, what.c_str());
                }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Gemm,
                         ::testing::Values(Shape{1, 1, 1}, Shape{1, 17, 3}, Shape{7, 1, 9}, Shape{8, 48, 128},
                                           Shape{9, 49, 129}, Shape{16, 16, 300}, Shape{19, 65, 257},
                                           Shape{33, 100, 64}, Shape{5, 97, 1}, Shape{70, 130, 1030}));

// An element's value does not depend on which tile computed it: the rows of a product computed from an
// odd row offset, or a column sub-range of B packed in pieces, are bit-for-bit those of the whole.
TEST(GemmPacking, RowOffsetsAndColumnRangesGiveIdenticalBits) {
    const int64_t rows = 137, cols = 150, depth = 200;
    for (const GemmKernel kernel : kKernels)
        for (const bool a_transposed : {false, true}) {
            const Stored a(rows, depth, a_transposed, 0, 21);
            const Stored b(depth, cols, true, 0, 22);
            Floats whole(static_cast<size_t>(rows * cols), 0.0f);
            Floats scratch(packed_size(depth, cols, kernel));
            gemm(whole.data(), cols, a.operand, b.operand, rows, cols, depth, false, scratch.data(), kernel);

            Floats packed(packed_size(depth, cols, kernel));
            const int64_t align = pack_column_align(kernel);
            for (int64_t begin = 0; begin < cols; begin += 2 * align)  // B packed in pieces, as threads would
                pack_columns(packed.data(), b.operand, depth, cols, begin, std::min(cols, begin + 2 * align),
                             kernel);
            const PackedOperand shared{packed.data(), depth, cols, 0, kernel};

            Floats pieces(whole.size(), -1.0f);
            const int64_t first_rows = 13;  // not a multiple of the register tile or the library's strip
            gemm_packed(pieces.data(), cols, a.operand, shared, first_rows, {}, 0, align);
            gemm_packed(pieces.data(), cols, a.operand, shared, first_rows, {}, align, cols);
            const GemmOperand later_rows{
                a_transposed ? a.operand.data + first_rows : a.operand.data + first_rows * a.operand.stride,
                a.operand.stride, a_transposed};
            gemm_packed(pieces.data() + first_rows * cols, cols, later_rows, shared, rows - first_rows, {});
            for (size_t i = 0; i < whole.size(); ++i)
                ASSERT_EQ(pieces[i], whole[i])
                    << kernel_name(kernel) << ", A transposed " << a_transposed << ": element " << i;
        }
}

// NormLab's kernel starting from a bias row gives bit for bit what adding the product onto rows holding
// the bias gives (the forward's old way), edges included. (The library's adds the bias after the sum:
// test_library_gemm.cpp.)
TEST(GemmPacking, RowBiasStartEqualsAccumulatingOntoBiasRows) {
    const GemmKernel kernel = GemmKernel::own;
    for (const int64_t depth : {0, 5, 200}) {
        const int64_t rows = 11, cols = 70;
        const Stored a(rows, depth, false, 0, 31);
        const Stored b(depth, cols, true, 0, 32);
        const Floats bias = random_tensor(cols, 33);
        Floats packed(std::max<size_t>(1, packed_size(depth, cols, kernel)));
        pack_columns(packed.data(), b.operand, depth, cols, 0, cols, kernel);
        const PackedOperand shared{packed.data(), depth, cols, 0, kernel};
        Floats onto_bias(static_cast<size_t>(rows * cols));
        for (int64_t row = 0; row < rows; ++row)
            std::copy(bias.begin(), bias.end(), onto_bias.begin() + row * cols);
        gemm_packed(onto_bias.data(), cols, a.operand, shared, rows, {.accumulate = true});
        Floats from_bias(onto_bias.size(), -7.0f);
        gemm_packed(from_bias.data(), cols, a.operand, shared, rows, {.row_bias = bias.data()});
        EXPECT_EQ(from_bias, onto_bias) << kernel_name(kernel) << ", depth " << depth;
    }
}

// Zero depth: C is zeroed, or left as it was when accumulating.
TEST(GemmPacking, ZeroDepth) {
    for (const GemmKernel kernel : kKernels) {
        Floats c = {1.0f, 2.0f, 3.0f, 4.0f};
        const float none = 0.0f;
        gemm(c.data(), 2, {&none, 1}, {&none, 2}, 2, 2, 0, true, nullptr, kernel);
        EXPECT_EQ(c, (Floats{1.0f, 2.0f, 3.0f, 4.0f})) << kernel_name(kernel);
        gemm(c.data(), 2, {&none, 1}, {&none, 2}, 2, 2, 0, false, nullptr, kernel);
        EXPECT_EQ(c, (Floats{0.0f, 0.0f, 0.0f, 0.0f})) << kernel_name(kernel);
    }
}

}  // namespace
}  // namespace normlab
