// The CUDA backend's matrix-product plans and head-major attention layout, checked on the host (no GPU
// needed): each GemmPlan run by a plain column-major GEMM with BLAS semantics must give the CPU
// reference's product, and the head-major index must put every q, k, v element where the CPU reads it.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/backend/cpu/attention_heads.h"
#include "engine/backend/cpu/cpu_reference_backend.h"
#include "engine/backend/cuda/attention_layout.h"
#include "engine/backend/cuda/gemm_plans.h"
#include "tests/engine/gradient_check.h"

namespace normlab {
namespace {

using testing::expect_close;
using testing::random_tensor;
using Floats = std::vector<float>;

// C = alpha op(A) op(B) + beta C as cuBLAS computes it: column-major, batched by the plan's strides.
void column_major_gemm(const GemmPlan& plan, float alpha, const float* a, const float* b, float beta,
                       float* c, int batch = 1) {
    for (int index = 0; index < batch; ++index) {
        const float* matrix_a = a + index * plan.stride_a;
        const float* matrix_b = b + index * plan.stride_b;
        float* matrix_c = c + index * plan.stride_c;
        for (int j = 0; j < plan.n; ++j) {
            for (int i = 0; i < plan.m; ++i) {
                double sum = 0.0;
                for (int l = 0; l < plan.k; ++l) {
                    const float av =
                        plan.transpose_a ? matrix_a[l + i * plan.lda] : matrix_a[i + l * plan.lda];
                    const float bv =
                        plan.transpose_b ? matrix_b[j + l * plan.ldb] : matrix_b[l + j * plan.ldb];
                    sum += static_cast<double>(av) * bv;
                }
                float& out = matrix_c[i + j * plan.ldc];
                out =
                    static_cast<float>(alpha * sum + (beta == 0.0f ? 0.0 : beta * static_cast<double>(out)));
            }
        }
    }
}

TEST(CudaPlans, LinearProductsMatchTheCpuReference) {
    const int n = 37, in = 24, out = 40;
    const Floats x = random_tensor(n * in, 1), w = random_tensor(out * in, 2), dy = random_tensor(n * out, 3);
    CpuReferenceBackend reference(1);

    Floats y_ref(n * out), y(n * out, 5.0f);
    reference.linear_forward(y_ref.data(), x.data(), w.data(), nullptr, n, in, out);
    column_major_gemm(linear_forward_plan(n, in, out), 1.0f, w.data(), x.data(), 0.0f, y.data());
    expect_close("y = x W^T", y, y_ref, 1e-6);

    Floats dx_ref = random_tensor(n * in, 4), dw_ref = random_tensor(out * in, 5);
    Floats dx = dx_ref, dw = dw_ref;
    reference.linear_backward(dx_ref.data(), dw_ref.data(), nullptr, dy.data(), x.data(), w.data(), n, in,
                              out, true);
    column_major_gemm(linear_input_grad_plan(n, in, out), 1.0f, w.data(), dy.data(), 1.0f, dx.data());
    column_major_gemm(linear_weight_grad_plan(n, in, out), 1.0f, x.data(), dy.data(), 1.0f, dw.data());
    expect_close("dx += dy W", dx, dx_ref, 1e-6);
    expect_close("dW += dy^T x", dw, dw_ref, 1e-6);
}

// rows[n, parts d] <-> head-major [parts][pairs][seq][hd] through head_major_index.
Floats to_heads(const Floats& rows, int parts, const HeadShape& shape) {
    Floats heads(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) heads[head_major_index(i, parts, shape)] = rows[i];
    return heads;
}

Floats to_rows(const Floats& heads, int parts, const HeadShape& shape) {
    Floats rows(heads.size());
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = heads[head_major_index(i, parts, shape)];
    return rows;
}

TEST(CudaPlans, HeadMajorLayoutReadsWhereTheCpuReads) {
    for (const HeadShape shape : {HeadShape{2, 7, 3, 5}, HeadShape{3, 4, 1, 8}}) {
        const int d = shape.d();
        Floats qkv(shape.rows() * 3 * d);
        for (size_t i = 0; i < qkv.size(); ++i) qkv[i] = static_cast<float>(i);
        const Floats heads = to_heads(qkv, 3, shape);
        const size_t nd = shape.head_elements();
        const AttentionInputs in = packed_qkv(qkv.data(), d);
        const AttentionShape mask{shape.batch, shape.seq, shape.heads, shape.head_dim};
        for (int pair = 0; pair < shape.pairs(); ++pair) {
            const AttentionHead at(pair, mask);
            const auto q = at.rows<ConstStridedView>(in.q, in.q_stride);
            const auto k = at.rows<ConstStridedView>(in.k, in.kv_stride);
            const auto v = at.rows<ConstStridedView>(in.v, in.kv_stride);
            for (int t = 0; t < shape.seq; ++t) {
                for (int e = 0; e < shape.head_dim; ++e) {
                    const size_t inner = (static_cast<size_t>(pair) * shape.seq + t) * shape.head_dim + e;
                    ASSERT_EQ(heads[inner], q(t, e)) << "q, pair " << pair << " t " << t << " e " << e;
                    ASSERT_EQ(heads[nd + inner], k(t, e)) << "k";
                    ASSERT_EQ(heads[2 * nd + inner], v(t, e)) << "v";
                }
            }
        }
        EXPECT_EQ(to_rows(heads, 3, shape), qkv) << "unpacking inverts packing";
    }
}

// Forward and backward attention assembled from the plans (softmax and its backward done plainly
// here), against the CPU reference's attention ops.
TEST(CudaPlans, AttentionProductsMatchTheCpuReference) {
    const HeadShape shape{2, 9, 3, 4};
    const int seq = shape.seq, hd = shape.head_dim, pairs = shape.pairs();
    const size_t nd = shape.head_elements();
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    const Floats qkv = random_tensor(3 * nd, 10, 1.5), dout = random_tensor(nd, 11);
    CpuReferenceBackend reference(1);
    Floats out_ref(nd), probs_ref(static_cast<size_t>(pairs) * seq * seq), dqkv_ref(3 * nd);
    reference.attention_forward(out_ref.data(), probs_ref.data(), qkv.data(), shape.batch, seq, shape.heads,
                                hd, {});
    reference.attention_backward(dqkv_ref.data(), dout.data(), qkv.data(), probs_ref.data(), shape.batch, seq,
                                 shape.heads, hd);

    const Floats heads = to_heads(qkv, 3, shape);
    const float* q = heads.data();
    const float* k = q + nd;
    const float* v = q + 2 * nd;
    Floats scores(probs_ref.size());
    column_major_gemm(attention_scores_plan(seq, hd), scale, k, q, 0.0f, scores.data(), pairs);
    for (size_t r = 0; r < scores.size() / seq; ++r) {  // causal softmax of row r = pair * seq + t
        float* row = scores.data() + r * seq;
        const int t = static_cast<int>(r % seq);
        double total = 0.0;
        float largest = row[0];
        for (int j = 1; j <= t; ++j) largest = std::max(largest, row[j]);
        for (int j = 0; j <= t; ++j) total += std::exp(static_cast<double>(row[j] - largest));
        for (int j = 0; j < seq; ++j)
            row[j] =
                j <= t ? static_cast<float>(std::exp(static_cast<double>(row[j] - largest)) / total) : 0.0f;
    }
    expect_close("P = softmax(scale Q K^T)", scores, probs_ref, 1e-5);

    Floats o(nd);
    column_major_gemm(attention_apply_plan(seq, hd), 1.0f, v, probs_ref.data(), 0.0f, o.data(), pairs);
    expect_close("O = P V", to_rows(o, 1, shape), out_ref, 1e-5);

    const Floats grad_o = to_heads(dout, 1, shape);
    Floats grads(3 * nd), grad_scores(probs_ref.size());
    float* grad_q = grads.data();
    float* grad_k = grad_q + nd;
    float* grad_v = grad_q + 2 * nd;
    column_major_gemm(attention_apply_transposed_plan(seq, hd), 1.0f, grad_o.data(), probs_ref.data(), 0.0f,
                      grad_v, pairs);
    column_major_gemm(attention_scores_plan(seq, hd), 1.0f, v, grad_o.data(), 0.0f, grad_scores.data(),
                      pairs);
    for (size_t r = 0; r < grad_scores.size() / seq; ++r) {  // dS = P (dP - sum dP P) scale, causal
        float* row = grad_scores.data() + r * seq;
        const float* p = probs_ref.data() + r * seq;
        const int t = static_cast<int>(r % seq);
        double weighted = 0.0;
        for (int j = 0; j <= t; ++j) weighted += static_cast<double>(row[j]) * p[j];
        for (int j = 0; j < seq; ++j)
            row[j] = j <= t ? p[j] * (row[j] - static_cast<float>(weighted)) * scale : 0.0f;
    }
    column_major_gemm(attention_apply_plan(seq, hd), 1.0f, k, grad_scores.data(), 0.0f, grad_q, pairs);
    column_major_gemm(attention_apply_transposed_plan(seq, hd), 1.0f, q, grad_scores.data(), 0.0f, grad_k,
                      pairs);
    expect_close("dqkv", to_rows(grads, 3, shape), dqkv_ref, 1e-5);
}

}  // namespace
}  // namespace normlab
