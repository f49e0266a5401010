// LIBXSMM's kernels (library_gemm.h) compute each element of C as its start (zero, or C's own value) plus
// the sum over depth in order, one fused multiply-add a step (a rounded multiply and add on targets
// without FMA), and a bias row is added after the sum: checked bit for bit against that scalar loop for
// every strip height up to past one strip, depths across the depth block, both A and B layouts and every
// start. ctest reruns it with LIBXSMM_TARGET forcing AVX2 and SSE, and with LIBXSMM_TARGET=generic (no
// code generator), where the backend must train on NormLab's own kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/cpu_gemm.h"
#include "engine/backend/cpu/library_gemm.h"
#include "engine/train/trainer.h"
#include "tests/engine/gradient_check.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {

using testing::random_tensor;
using Floats = std::vector<float>;

// One step of the sum as the target's kernels take it.
float step(float sum, float a, float b, bool fused) {
    if (fused) return std::fma(a, b, sum);
    volatile float product = a * b;  // rounded on its own, never contracted into an FMA
    return sum + product;
}

TEST(LibraryGemm, RunsOnTheTargetAskedFor) {
    const std::string target = library_gemm_target();
    std::cout << "LIBXSMM target: " << target << (library_gemm_fuses_multiply_add() ? " (FMA)" : " (no FMA)")
              << "\n";
    if (const char* asked = std::getenv("LIBXSMM_TARGET"); asked && *asked) {
        EXPECT_EQ(target, asked);
    }
}

// Where LIBXSMM generates no kernels (LIBXSMM_TARGET=generic here; a CPU without a code generator, or no
// executable memory), the backend picks NormLab's kernel, says so, and trains, instead of failing inside
// a product; elsewhere it takes the library's.
TEST(LibraryGemm, WithoutKernelsTheBackendTrainsOnItsOwn) {
    const char* target = std::getenv("LIBXSMM_TARGET");
    const bool generic = target && std::string(target) == "generic";
    ::unsetenv("NORMLAB_GEMM");
    EXPECT_EQ(library_gemm_available(), !generic);
    EXPECT_EQ(linear_gemm_kernel_from_environment(), generic ? GemmKernel::own : GemmKernel::library);
    EXPECT_NE(CpuBackend(1).name().find(generic ? "blocked GEMM" : "LIBXSMM GEMM"), std::string::npos);
    Config config = testing::small_model_config(32, 2, 16, 4, 3);
    config.device = "cpu";
    Trainer trainer(config);
    for (int step = 0; step < 3; ++step) EXPECT_TRUE(std::isfinite(trainer.step().record.loss));
}

TEST(LibraryGemm, EachElementIsTheInOrderSumFromItsStart) {
    const bool fused = library_gemm_fuses_multiply_add();
    const int64_t cols = 100;  // one whole panel and one edge panel
    for (const int64_t depth : {1, 7, 64, 300, 1030})
        for (const bool a_transposed : {false, true})
            for (const bool b_transposed : {false, true})
                for (const int start_kind : {0, 1, 2}) {  // zero, accumulate, bias row
                    const int64_t rows = 70;
                    const int64_t a_stride = (a_transposed ? rows : depth) + 3;
                    const int64_t b_stride = (b_transposed ? depth : cols) + 5;
                    const Floats a =
                        random_tensor(static_cast<size_t>((a_transposed ? depth : rows) * a_stride), 1);
                    const Floats b =
                        random_tensor(static_cast<size_t>((b_transposed ? cols : depth) * b_stride), 2);
                    const Floats bias = random_tensor(cols, 3);
                    const int64_t ldc = cols + 2;
                    const Floats initial = random_tensor(static_cast<size_t>(rows * ldc), 4);
                    auto a_at = [&](int64_t i, int64_t k) {
                        return a_transposed ? a[k * a_stride + i] : a[i * a_stride + k];
                    };
                    auto b_at = [&](int64_t k, int64_t j) {
                        return b_transposed ? b[j * b_stride + k] : b[k * b_stride + j];
                    };

                    Floats packed(packed_size(depth, cols, GemmKernel::library));
                    pack_columns(packed.data(), {b.data(), b_stride, b_transposed}, depth, cols, 0, cols,
                                 GemmKernel::library);
                    const PackedOperand shared{packed.data(), depth, cols, 0, GemmKernel::library};
                    const GemmStart start{.accumulate = start_kind == 1,
                                          .row_bias = start_kind == 2 ? bias.data() : nullptr};
                    // every strip height from 1 to `rows`, each from row 0 of its own C
                    for (int64_t strip = 1; strip <= rows; strip += (strip < 16 ? 1 : 9)) {
                        Floats c = initial;
                        gemm_packed(c.data(), ldc, {a.data(), a_stride, a_transposed}, shared, strip, start);
                        for (int64_t i = 0; i < strip; ++i)
                            for (int64_t j = 0; j < ldc; ++j) {
                                const size_t at = static_cast<size_t>(i * ldc + j);
                                if (j >= cols) {
                                    ASSERT_EQ(c[at], initial[at]) << "wrote past column " << cols;
                                    continue;
                                }
                                float sum = start_kind == 1 ? initial[at] : 0.0f;
                                for (int64_t k = 0; k < depth; ++k)
                                    sum = step(sum, a_at(i, k), b_at(k, j), fused);
                                if (start_kind == 2) sum += bias[j];
                                ASSERT_EQ(c[at], sum)
                                    << "depth " << depth << ", A^T " << a_transposed << ", B^T "
                                    << b_transposed << ", start " << start_kind << ", strip " << strip
                                    << " at (" << i << ", " << j << ")";
                            }
                    }
                }
}

}  // namespace
}  // namespace normlab
