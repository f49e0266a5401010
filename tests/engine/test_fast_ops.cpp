// The fast CPU backend against the readable reference ops: every op the fast backend overrides, on
// random inputs, at sizes that stay on one thread and sizes that split across threads, with 1 and 2
// threads. Products may round differently (blocking, triangular kernels), so the match is relative.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/cpu_parallel.h"
#include "engine/backend/cpu/cpu_reference_backend.h"
#include "tests/engine/gradient_check.h"

namespace normlab {
namespace {

using testing::expect_close;
using testing::random_tensor;
using Floats = std::vector<float>;

// (threads, rows, GEMM kernels): 1 thread, 2 threads on a size below the parallel threshold, 2 threads
// split; the default kernels (LIBXSMM's for linear layers, and for the rest NormLab's where it is as wide,
// as in a native build), NormLab's everywhere, and LIBXSMM's everywhere (a portable build's choice).
struct Case {
    int threads;
    int rows;
    GemmKernel linear_kernel = GemmKernel::library;
    GemmKernel other_kernel = own_kernel_if_as_wide(GemmKernel::library);
};

class FastOps : public ::testing::TestWithParam<Case> {
  protected:
    CpuReferenceBackend reference{2};
    CpuBackend fast{GetParam().threads, GetParam().linear_kernel, GetParam().other_kernel};
    int n = GetParam().rows;
};

// Both ways of cutting dW: by output rows (out >= in) and by input columns (in > out); and both ways the
// backward reads W and x: in place (in 48, whole vectors per row) and packed (in 24); the last two are
// large enough at 4096 rows to be cut into kFineChunksPerThread chunks per thread.
TEST_P(FastOps, Linear) {
    for (const auto& [in, out] :
         {std::pair{48, 40}, std::pair{24, 72}, std::pair{96, 80}, std::pair{40, 136}}) {
        const Floats x = random_tensor(n * in, 1), w = random_tensor(out * in, 2), b = random_tensor(out, 3);
        const Floats dy = random_tensor(n * out, 4);
        for (const bool with_bias : {false, true}) {
            Floats y_ref(n * out), y_fast(n * out);
            reference.linear_forward(y_ref.data(), x.data(), w.data(), with_bias ? b.data() : nullptr, n, in,
                                     out);
            fast.linear_forward(y_fast.data(), x.data(), w.data(), with_bias ? b.data() : nullptr, n, in,
                                out);
            expect_close("linear y", y_fast, y_ref);
        }
        for (const bool accumulate : {false, true}) {
            Floats dx_ref(n * in, 0.5f), dx_fast(n * in, 0.5f), dw_ref(w.size(), 0.25f),
                dw_fast(w.size(), 0.25f);
            Floats db_ref(out, 1.0f), db_fast(out, 1.0f);
            reference.linear_backward(dx_ref.data(), dw_ref.data(), db_ref.data(), dy.data(), x.data(),
                                      w.data(), n, in, out, accumulate);
            fast.linear_backward(dx_fast.data(), dw_fast.data(), db_fast.data(), dy.data(), x.data(),
                                 w.data(), n, in, out, accumulate);
            expect_close("linear dx", dx_fast, dx_ref);
            expect_close("linear dW", dw_fast, dw_ref);
            expect_close("linear db", db_fast, db_ref);
        }
        Floats dw_ref(w.size(), 0.0f), dw_fast(w.size(), 0.0f);
        reference.linear_backward(nullptr, dw_ref.data(), nullptr, dy.data(), x.data(), w.data(), n, in, out,
                                  false);
        fast.linear_backward(nullptr, dw_fast.data(), nullptr, dy.data(), x.data(), w.data(), n, in, out,
                             false);
        expect_close("linear dW without dx", dw_fast, dw_ref);
    }
}

TEST_P(FastOps, Embedding) {
    const int d = 40, seq = 8, vocab = 11, batch = std::max(1, n / seq);
    const Floats wte = random_tensor(vocab * d, 17), wpe = random_tensor(seq * d, 18);
    std::vector<int32_t> tokens(batch * seq);
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 7) % vocab);
    Floats x_ref(tokens.size() * d), x_fast(tokens.size() * d);
    reference.embedding_forward(x_ref.data(), tokens.data(), wte.data(), wpe.data(), batch, seq, d);
    fast.embedding_forward(x_fast.data(), tokens.data(), wte.data(), wpe.data(), batch, seq, d);
    expect_close("embedding", x_fast, x_ref, 0.0);
}

TEST_P(FastOps, EmbeddingWithoutPositions) {
    const int d = 40, seq = 8, vocab = 11, batch = std::max(1, n / seq);
    const Floats wte = random_tensor(vocab * d, 17);
    std::vector<int32_t> tokens(batch * seq);
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 7) % vocab);
    Floats x_fast(tokens.size() * d);
    fast.embedding_forward(x_fast.data(), tokens.data(), wte.data(), nullptr, batch, seq, d);
    Floats expected;
    for (int32_t token : tokens)
        expected.insert(expected.end(), wte.begin() + token * d, wte.begin() + (token + 1) * d);
    expect_close("embedding without wpe", x_fast, expected, 0.0);
}

// The gated FFN's product and its backward (dup aliasing dh, as the model calls it), grouped-query
// attention's repeated heads and their sums, and RoPE both ways on strided rows, against the reference.
TEST_P(FastOps, GatedProductGroupedHeadsAndRope) {
    const size_t count = static_cast<size_t>(n) * 64;
    const Floats gate = random_tensor(count, 21, 2.0), up = random_tensor(count, 22),
                 dh = random_tensor(count, 23);
    for (const FeedForward kind : {FeedForward::SwiGlu, FeedForward::GeGlu}) {
        Floats h_ref(count), h_fast(count), dgate_ref(count), dgate_fast(count), dup_ref = dh, dup_fast = dh;
        reference.gated_forward(kind, h_ref.data(), gate.data(), up.data(), count);
        fast.gated_forward(kind, h_fast.data(), gate.data(), up.data(), count);
        expect_close("gated h", h_fast, h_ref, 0.0);
        reference.gated_backward(kind, dgate_ref.data(), dup_ref.data(), dup_ref.data(), gate.data(),
                                 up.data(), count);
        fast.gated_backward(kind, dgate_fast.data(), dup_fast.data(), dup_fast.data(), gate.data(), up.data(),
                            count);
        expect_close("gated dgate", dgate_fast, dgate_ref, 0.0);
        expect_close("gated dup", dup_fast, dup_ref, 0.0);
    }
    const int kv_heads = 2, group = 3, kv_stride = 2 * kv_heads * 16 + 8, repeated = kv_heads * group * 16;
    const Floats kv = random_tensor(static_cast<size_t>(n) * kv_stride, 25);
    Floats wide_ref(static_cast<size_t>(n) * repeated), wide_fast(wide_ref.size());
    const HeadGroups groups{n, kv_heads, group, 16};
    reference.repeat_heads(wide_ref.data(), kv.data(), kv_stride, groups);
    fast.repeat_heads(wide_fast.data(), kv.data(), kv_stride, groups);
    expect_close("repeated heads", wide_fast, wide_ref, 0.0);
    Floats sums_ref = kv, sums_fast = kv;
    reference.sum_head_groups(sums_ref.data(), kv_stride, wide_ref.data(), groups);
    fast.sum_head_groups(sums_fast.data(), kv_stride, wide_ref.data(), groups);
    expect_close("head group sums", sums_fast, sums_ref, 0.0);
    const int heads = 4, head_dim = 16, stride = 3 * heads * head_dim, seq = 8;
    const Floats x = random_tensor(static_cast<size_t>(n) * stride, 24);
    for (const bool inverse : {false, true}) {
        Floats ref = x, quick = x;
        reference.rope(ref.data(), stride, n, seq, heads, head_dim, 500.0f, inverse);
        fast.rope(quick.data(), stride, n, seq, heads, head_dim, 500.0f, inverse);
        expect_close(inverse ? "rope inverse" : "rope", quick, ref, 0.0);
    }
}

// Attention over depth (the softmax over sources, in place as the model calls it, and the weighted sum,
// forward and backward): the same per-row maths, so the same bits.
TEST_P(FastOps, DepthAttention) {
    const int sources = 5, d = 24;
    const size_t scores = static_cast<size_t>(sources) * n, values = scores * d;
    const Floats logits = random_tensor(scores, 26, 2.0), v = random_tensor(values, 27),
                 dh = random_tensor(static_cast<size_t>(n) * d, 28);
    Floats p_ref = logits, p_fast = logits;
    reference.depth_softmax_forward(p_ref.data(), p_ref.data(), sources, n);
    fast.depth_softmax_forward(p_fast.data(), p_fast.data(), sources, n);
    expect_close("depth softmax", p_fast, p_ref, 0.0);
    Floats h_ref(static_cast<size_t>(n) * d), h_fast(h_ref.size());
    reference.depth_mix_forward(h_ref.data(), p_ref.data(), v.data(), sources, n, d);
    fast.depth_mix_forward(h_fast.data(), p_ref.data(), v.data(), sources, n, d);
    expect_close("depth mix", h_fast, h_ref, 0.0);
    Floats dv_ref = v, dv_fast = v, dp_ref(scores), dp_fast(scores);
    reference.depth_mix_backward(dv_ref.data(), dp_ref.data(), dh.data(), p_ref.data(), v.data(), sources, n,
                                 d);
    fast.depth_mix_backward(dv_fast.data(), dp_fast.data(), dh.data(), p_ref.data(), v.data(), sources, n, d);
    expect_close("depth mix dv", dv_fast, dv_ref, 0.0);
    expect_close("depth mix dp", dp_fast, dp_ref, 0.0);
    reference.depth_softmax_backward(dp_ref.data(), dp_ref.data(), p_ref.data(), sources, n);
    fast.depth_softmax_backward(dp_fast.data(), dp_fast.data(), p_ref.data(), sources, n);
    expect_close("depth softmax backward", dp_fast, dp_ref, 0.0);
}

TEST_P(FastOps, Norms) {
    const int d = 40;
    const Floats x = random_tensor(n * d, 5), w = random_tensor(d, 6), b = random_tensor(d, 7);
    const Floats dy = random_tensor(n * d, 8);
    const float alpha = 0.7f;
    for (const NormType type : {NormType::LayerNorm, NormType::RmsNorm, NormType::DyT}) {
        const std::string name = "norm " + to_string(type);
        Floats y_ref(n * d), y_fast(n * d), stats_ref(2 * n), stats_fast(2 * n);
        reference.norm_forward(type, y_ref.data(), stats_ref.data(), x.data(), w.data(), b.data(),
                               {0.0f, &alpha}, n, d, 1e-5f);
        fast.norm_forward(type, y_fast.data(), stats_fast.data(), x.data(), w.data(), b.data(),
                          {0.0f, &alpha}, n, d, 1e-5f);
        expect_close(name + " y", y_fast, y_ref);
        if (type != NormType::DyT) expect_close(name + " stats", stats_fast, stats_ref);
        for (const bool accumulate : {false, true}) {
            Floats dx_ref(n * d, 0.5f), dx_fast(n * d, 0.5f), dw_ref(d, 1.0f), dw_fast(d, 1.0f);
            Floats db_ref(d, 2.0f), db_fast(d, 2.0f), da_ref(1, 0.5f), da_fast(1, 0.5f);
            reference.norm_backward(type, dx_ref.data(), dw_ref.data(), db_ref.data(), da_ref.data(),
                                    dy.data(), x.data(), stats_ref.data(), w.data(), {0.0f, &alpha}, n, d,
                                    accumulate);
            fast.norm_backward(type, dx_fast.data(), dw_fast.data(), db_fast.data(), da_fast.data(),
                               dy.data(), x.data(), stats_ref.data(), w.data(), {0.0f, &alpha}, n, d,
                               accumulate);
            expect_close(name + " dx", dx_fast, dx_ref);
            expect_close(name + " dw", dw_fast, dw_ref);
            if (type != NormType::RmsNorm) expect_close(name + " db", db_fast, db_ref);
            if (type == NormType::DyT) expect_close(name + " dalpha", da_fast, da_ref);
        }
    }
}

// QK-norm's LayerNorm has no bias (b null): the same values as a zero bias, in both paths.
TEST_P(FastOps, LayerNormWithoutBias) {
    const int d = 16;
    const Floats x = random_tensor(n * d, 11), w = random_tensor(d, 12), zero_bias(d, 0.0f);
    Floats y_ref(n * d), y_fast(n * d), y_zero(n * d), stats(2 * n);
    reference.norm_forward(NormType::LayerNorm, y_ref.data(), stats.data(), x.data(), w.data(), nullptr, {},
                           n, d, 1e-5f);
    fast.norm_forward(NormType::LayerNorm, y_fast.data(), stats.data(), x.data(), w.data(), nullptr, {}, n, d,
                      1e-5f);
    reference.norm_forward(NormType::LayerNorm, y_zero.data(), stats.data(), x.data(), w.data(),
                           zero_bias.data(), {}, n, d, 1e-5f);
    expect_close("layernorm without bias, fast", y_fast, y_ref);
    expect_close("layernorm without bias against a zero bias", y_ref, y_zero, 0.0);
}

TEST_P(FastOps, Attention) {
    const int heads = 2, head_dim = 8, seq = 16, batch = std::max(1, n / seq);
    const int d = heads * head_dim, rows = batch * seq;
    const Floats qkv = random_tensor(rows * 3 * d, 9), dout = random_tensor(rows * d, 10);
    const size_t probs_size = static_cast<size_t>(batch) * heads * seq * seq;
    Floats out_ref(rows * d), out_fast(rows * d), probs_ref(probs_size), probs_fast(probs_size, 7.0f);
    float entropy_ref = 0, entropy_fast = 0;
    Floats max_ref(heads), max_fast(heads);  // each head's largest logit
    reference.attention_forward(out_ref.data(), probs_ref.data(), qkv.data(), batch, seq, heads, head_dim,
                                {&entropy_ref, max_ref.data()});
    fast.attention_forward(out_fast.data(), probs_fast.data(), qkv.data(), batch, seq, heads, head_dim,
                           {&entropy_fast, max_fast.data()});
    expect_close("attention out", out_fast, out_ref);
    expect_close("attention probs (zero above the diagonal)", probs_fast, probs_ref);
    EXPECT_NEAR(entropy_fast, entropy_ref, 1e-4 * std::abs(entropy_ref));
    // each head's largest causal logit q_t . k_j / sqrt(hd), j <= t, computed here directly
    for (int h = 0; h < heads; ++h) {
        double largest = -1e30;
        for (int b = 0; b < batch; ++b)
            for (int t = 0; t < seq; ++t)
                for (int j = 0; j <= t; ++j) {
                    double dot = 0.0;
                    for (int i = 0; i < head_dim; ++i) {
                        const size_t column = static_cast<size_t>(h) * head_dim + i;
                        dot += static_cast<double>(qkv[(static_cast<size_t>(b) * seq + t) * 3 * d + column]) *
                               qkv[(static_cast<size_t>(b) * seq + j) * 3 * d + d + column];
                    }
                    largest = std::max(largest, dot / std::sqrt(static_cast<double>(head_dim)));
                }
        EXPECT_NEAR(max_ref[h], largest, 1e-5 * std::abs(largest)) << "head " << h;
        EXPECT_NEAR(max_fast[h], largest, 1e-5 * std::abs(largest)) << "head " << h;
    }
    EXPECT_NE(max_ref[0], max_ref[1]);
    Floats dqkv_ref(rows * 3 * d), dqkv_fast(rows * 3 * d, 3.0f);
    reference.attention_backward(dqkv_ref.data(), dout.data(), qkv.data(), probs_ref.data(), batch, seq,
                                 heads, head_dim);
    fast.attention_backward(dqkv_fast.data(), dout.data(), qkv.data(), probs_ref.data(), batch, seq, heads,
                            head_dim);
    expect_close("attention dqkv", dqkv_fast, dqkv_ref);
}

TEST_P(FastOps, CrossAndMaskedAttention) {
    // separate q [rows, d] and kv [rows, 2d] sources; bidirectional, bidirectional over a 5-key memory,
    // and causal within 5 keys
    const int heads = 2, head_dim = 8, seq = 16, batch = std::max(1, n / seq);
    const int d = heads * head_dim, rows = batch * seq;
    const Floats q = random_tensor(rows * d, 14), kv = random_tensor(rows * 2 * d, 15);
    const Floats dout = random_tensor(rows * d, 16);
    const AttentionInputs in{q.data(), kv.data(), kv.data() + d, d, 2 * d};
    const size_t probs_size = static_cast<size_t>(batch) * heads * seq * seq;
    for (const auto& [causal, keys] : {std::pair{false, 0}, std::pair{false, 5}, std::pair{true, 5}}) {
        const AttentionShape shape{batch, seq, heads, head_dim, causal, keys};
        const std::string name =
            std::string(causal ? "causal" : "bidirectional") + ", keys " + std::to_string(keys);
        Floats out_ref(rows * d), out_fast(rows * d), probs_ref(probs_size), probs_fast(probs_size, 7.0f);
        float entropy_ref = 0, entropy_fast = 0;
        Floats max_ref(heads), max_fast(heads);  // each head's largest logit
        reference.attention_forward(out_ref.data(), probs_ref.data(), in, shape,
                                    {&entropy_ref, max_ref.data()});
        fast.attention_forward(out_fast.data(), probs_fast.data(), in, shape,
                               {&entropy_fast, max_fast.data()});
        expect_close(name + " out", out_fast, out_ref);
        expect_close(name + " probs (zero where masked)", probs_fast, probs_ref);
        EXPECT_NEAR(entropy_fast, entropy_ref, 1e-4 * std::abs(entropy_ref)) << name;
        expect_close(name + " max logit per head", max_fast, max_ref);
        Floats dq_ref(rows * d), dq_fast(rows * d, 3.0f), dkv_ref(rows * 2 * d), dkv_fast(rows * 2 * d, 3.0f);
        reference.attention_backward({dq_ref.data(), dkv_ref.data(), dkv_ref.data() + d, d, 2 * d},
                                     dout.data(), in, probs_ref.data(), shape);
        fast.attention_backward({dq_fast.data(), dkv_fast.data(), dkv_fast.data() + d, d, 2 * d}, dout.data(),
                                in, probs_ref.data(), shape);
        expect_close(name + " dq", dq_fast, dq_ref);
        expect_close(name + " dkv", dkv_fast, dkv_ref);
    }
}

TEST_P(FastOps, ElementWise) {
    const size_t count = static_cast<size_t>(n) * 64;
    const Floats x = random_tensor(count, 11), f = random_tensor(count, 12), dy = random_tensor(count, 13);
    for (const Activation kind : {Activation::Relu, Activation::Gelu, Activation::GeluTanh}) {
        Floats y_ref(count), y_fast(count), dx_ref(count), dx_fast(count);
        reference.activation_forward(kind, y_ref.data(), x.data(), count);
        fast.activation_forward(kind, y_fast.data(), x.data(), count);
        expect_close("activation y", y_fast, y_ref, 0.0);
        reference.activation_backward(kind, dx_ref.data(), dy.data(), x.data(), count);
        fast.activation_backward(kind, dx_fast.data(), dy.data(), x.data(), count);
        expect_close("activation dx", dx_fast, dx_ref, 0.0);
    }
    const float c = 0.8f, a = 1.3f;
    Floats s_ref(count), s_fast(count);
    reference.residual_forward(s_ref.data(), x.data(), f.data(), {0.0f, &c}, {0.0f, &a}, count);
    fast.residual_forward(s_fast.data(), x.data(), f.data(), {0.0f, &c}, {0.0f, &a}, count);
    expect_close("residual s", s_fast, s_ref, 0.0);
    // Fused with its telemetry sums: the same s, and the sums the two reductions give afterwards.
    ASSERT_TRUE(fast.fuses_residual_sums());
    ASSERT_FALSE(reference.fuses_residual_sums());
    std::vector<double> fused(4, -1.0), separate(4, -1.0);
    Floats s_fused(count);
    fast.residual_forward_with_sums(s_fused.data(), x.data(), f.data(), {0.0f, &c}, {0.0f, &a}, count,
                                    {&fused[0], &fused[1], &fused[2], &fused[3]});
    reference.residual_forward_with_sums(s_ref.data(), x.data(), f.data(), {0.0f, &c}, {0.0f, &a}, count,
                                         {&separate[0], &separate[1], &separate[2], &separate[3]});
    expect_close("residual s with sums", s_fused, s_ref, 0.0);
    double s_sum = 0.0, s_squares = 0.0, f_sum = 0.0, f_squares = 0.0;
    for (size_t i = 0; i < count; ++i) {
        s_sum += s_ref[i];
        s_squares += static_cast<double>(s_ref[i]) * s_ref[i];
        f_sum += f[i];
        f_squares += static_cast<double>(f[i]) * f[i];
    }
    const double expected[4] = {s_sum, s_squares, f_sum, f_squares};
    for (int k = 0; k < 4; ++k) {
        EXPECT_NEAR(fused[k], expected[k], 1e-9 * (1.0 + std::abs(expected[k]))) << "fused sum " << k;
        EXPECT_NEAR(separate[k], expected[k], 1e-9 * (1.0 + std::abs(expected[k]))) << "separate sum " << k;
    }
    Floats dx_ref(count), dx_fast(count), df_ref(count), df_fast(count), sums_ref{0.5f, 0.25f},
        sums_fast{0.5f, 0.25f};
    reference.residual_backward(dx_ref.data(), df_ref.data(), &sums_ref[0], &sums_ref[1], dy.data(), x.data(),
                                f.data(), {0.0f, &c}, {0.0f, &a}, count);
    fast.residual_backward(dx_fast.data(), df_fast.data(), &sums_fast[0], &sums_fast[1], dy.data(), x.data(),
                           f.data(), {0.0f, &c}, {0.0f, &a}, count);
    expect_close("residual dx", dx_fast, dx_ref, 0.0);
    expect_close("residual df", df_fast, df_ref, 0.0);
    expect_close("residual dc, da", sums_fast, sums_ref, 1e-6);

    Floats scaled_ref = x, scaled_fast = x, added_ref = x, added_fast = x, filled(count, 1.0f);
    reference.scale(scaled_ref.data(), 0.3f, count);
    fast.scale(scaled_fast.data(), 0.3f, count);
    expect_close("scale", scaled_fast, scaled_ref, 0.0);
    reference.add(added_ref.data(), f.data(), count);
    fast.add(added_fast.data(), f.data(), count);
    expect_close("add", added_fast, added_ref, 0.0);
    fast.fill(filled.data(), -2.0f, count);
    expect_close("fill", filled, Floats(count, -2.0f), 0.0);
}

TEST_P(FastOps, OptimizerUpdates) {
    const size_t count = static_cast<size_t>(n) * 64;
    const Floats param = random_tensor(count, 14), grad = random_tensor(count, 15);
    for (const OptimizerKind kind :
         {OptimizerKind::Sgd, OptimizerKind::Adam, OptimizerKind::AdamW, OptimizerKind::RAdam}) {
        OptimizerStep step;
        step.kind = kind;
        step.lr = 1e-2f;
        step.grad_scale = 0.5f;
        step.weight_decay = 0.1f;
        step.bias_correction1 = 0.1f;
        step.bias_correction2 = 0.01f;
        step.radam_rect = kind == OptimizerKind::RAdam ? 0.4f : 0.0f;
        Floats p_ref = param, p_fast = param, m_ref(count, 0.1f), m_fast(count, 0.1f), v_ref(count, 0.2f);
        Floats v_fast(count, 0.2f), u_ref(count), u_fast(count);
        reference.optimizer_update(step, p_ref.data(), grad.data(), m_ref.data(), v_ref.data(), u_ref.data(),
                                   count);
        fast.optimizer_update(step, p_fast.data(), grad.data(), m_fast.data(), v_fast.data(), u_fast.data(),
                              count);
        expect_close("optimizer param", p_fast, p_ref, 1e-6);
        expect_close("optimizer m", m_fast, m_ref, 1e-6);
        expect_close("optimizer v", v_fast, v_ref, 1e-6);
        expect_close("optimizer update", u_fast, u_ref, 1e-6);
    }
}

// The whole-model update: slices with their own weight decays (a gap between two of them stays
// untouched), and the telemetry squares of the updated parameters and of the updates, against the
// reference's per-slice updates and reductions.
TEST_P(FastOps, OptimizerUpdateOverSlices) {
    const size_t count = static_cast<size_t>(n) * 64 + 40;
    const std::vector<Slice> slices = {{0, 3},
                                       {3, static_cast<size_t>(n) * 40},
                                       {static_cast<size_t>(n) * 40 + 40, static_cast<size_t>(n) * 24}};
    const float decays[] = {0.0f, 0.1f, 0.3f};
    const Floats param = random_tensor(count, 16), grad = random_tensor(count, 17);
    for (const OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::AdamW}) {
        OptimizerStep step;
        step.kind = kind;
        step.lr = 1e-2f;
        step.bias_correction1 = 0.1f;
        step.bias_correction2 = 0.01f;
        Floats p_ref = param, p_fast = param, m_ref(count, 0.1f), m_fast(count, 0.1f), v_ref(count, 0.2f);
        Floats v_fast(count, 0.2f), u_ref(count, 9.0f), u_fast(count, 9.0f);
        std::vector<double> params_ref(3), updates_ref(3), params_fast(3, -1.0), updates_fast(3, -1.0);
        reference.optimizer_update_slices(step, slices, decays, p_ref.data(), grad.data(), m_ref.data(),
                                          v_ref.data(), u_ref.data(),
                                          {params_ref.data(), updates_ref.data()});
        fast.optimizer_update_slices(step, slices, decays, p_fast.data(), grad.data(), m_fast.data(),
                                     v_fast.data(), u_fast.data(), {params_fast.data(), updates_fast.data()});
        expect_close("sliced param", p_fast, p_ref, 1e-6);
        expect_close("sliced m", m_fast, m_ref, 1e-6);
        expect_close("sliced v", v_fast, v_ref, 1e-6);
        expect_close("sliced update", u_fast, u_ref, 1e-6);
        EXPECT_EQ(p_fast[static_cast<size_t>(n) * 40 + 20], param[static_cast<size_t>(n) * 40 + 20])
            << "the gap";
        for (size_t s = 0; s < slices.size(); ++s) {
            // the elements match to 1e-6 (float rounding of the update), so their squares' sums do too
            EXPECT_NEAR(params_fast[s], params_ref[s], 1e-6 * params_ref[s]) << "slice " << s;
            EXPECT_NEAR(updates_fast[s], updates_ref[s], 1e-6 * updates_ref[s]) << "slice " << s;
            EXPECT_GT(updates_ref[s], 0.0) << "slice " << s;
        }
    }
}

TEST_P(FastOps, CrossEntropyAndReductions) {
    const int vocab = 65;
    const Floats logits = random_tensor(n * vocab, 16);
    std::vector<int32_t> targets(n);
    for (int row = 0; row < n; ++row) targets[row] = row % 7 == 3 ? -1 : (row * 31) % vocab;
    Floats grad_ref(n * vocab), grad_fast(n * vocab, 9.0f);
    const auto ref =
        reference.cross_entropy(grad_ref.data(), logits.data(), targets.data(), n, vocab, true, 0.01f);
    const auto got =
        fast.cross_entropy(grad_fast.data(), logits.data(), targets.data(), n, vocab, true, 0.01f);
    EXPECT_NEAR(got.loss_sum, ref.loss_sum, 1e-9 * std::abs(ref.loss_sum));
    EXPECT_EQ(got.scored, ref.scored);
    EXPECT_EQ(got.correct, ref.correct);
    EXPECT_NEAR(got.z_loss_sum, ref.z_loss_sum, 1e-9 * ref.z_loss_sum);
    EXPECT_NEAR(got.log_z_sum, ref.log_z_sum, 1e-9 * std::abs(ref.log_z_sum));
    EXPECT_EQ(got.log_z_max_abs, ref.log_z_max_abs);
    EXPECT_NEAR(got.logit_sum, ref.logit_sum, 1e-9 * std::abs(ref.logit_sum) + 1e-9);
    EXPECT_EQ(got.logit_max, ref.logit_max);
    expect_close("cross-entropy gradient", grad_fast, grad_ref, 1e-6);

    const std::vector<Slice> slices = {{0, 0},
                                       {3, 1},
                                       {5, static_cast<size_t>(n) * 40},
                                       {17, 9},
                                       {static_cast<size_t>(n) * 20, static_cast<size_t>(n) * 45}};
    for (const bool squares : {true, false}) {
        std::vector<double> sums_ref(slices.size()), sums_fast(slices.size(), 5.0);
        if (squares) {
            reference.sum_squares(logits.data(), slices, sums_ref.data());
            fast.sum_squares(logits.data(), slices, sums_fast.data());
        } else {
            reference.sum_values(logits.data(), slices, sums_ref.data());
            fast.sum_values(logits.data(), slices, sums_fast.data());
        }
        for (size_t s = 0; s < slices.size(); ++s)
            EXPECT_NEAR(sums_fast[s], sums_ref[s], 1e-9 * (1.0 + std::abs(sums_ref[s]))) << "slice " << s;
    }
    // Counting below a threshold: the fast backend's lanes count what the reference counts, exactly.
    for (const float threshold : {-1e9f, -0.5f, 0.0f, 0.25f, 1e9f}) {
        std::vector<double> below_ref(slices.size()), below_fast(slices.size(), 5.0);
        reference.count_below(logits.data(), slices, threshold, below_ref.data());
        fast.count_below(logits.data(), slices, threshold, below_fast.data());
        EXPECT_EQ(below_fast, below_ref) << threshold;
        double expected = 0.0;  // the last slice by hand
        for (size_t i = 0; i < slices.back().count; ++i)
            expected += logits[slices.back().offset + i] < threshold;
        EXPECT_EQ(below_ref.back(), expected) << threshold;
    }
    // Both in one pass: bit for bit the two separate reductions.
    std::vector<double> values(slices.size()), squares(slices.size());
    std::vector<double> both_values(slices.size(), 5.0), both_squares(slices.size(), 5.0);
    fast.sum_values(logits.data(), slices, values.data());
    fast.sum_squares(logits.data(), slices, squares.data());
    fast.sum_values_and_squares(logits.data(), slices, both_values.data(), both_squares.data());
    EXPECT_EQ(both_values, values);
    EXPECT_EQ(both_squares, squares);
}

// Every task of every run happens exactly once, whatever thread claims it, run after run.
TEST(TaskPool, RunsEveryTaskOnceAcrossManyRuns) {
    for (const int threads : {1, 2, 4}) {
        TaskPool pool(threads);
        std::vector<std::atomic<int>> hits(64);
        for (int run = 0; run < 3000; ++run) {
            const int tasks = 1 + run % 64;
            pool.run(tasks, [&](int task) { hits[task].fetch_add(1); });
            for (int task = 0; task < 64; ++task) {
                ASSERT_EQ(hits[task].exchange(0), task < tasks ? 1 : 0)
                    << threads << " threads, run " << run << ", task " << task;
            }
        }
    }
}

// The caller claims from the front and the worker from the back, so with two threads the caller's
// tasks are always a prefix of the run and the worker's the rest: each thread keeps the same rows of
// an op from one op to the next (with one-ended claiming the two would interleave).
TEST(TaskPool, TwoThreadsSplitEveryRunIntoTheCallersPrefixAndTheWorkersSuffix) {
    TaskPool pool(2);
    std::vector<int> slots(64);
    int runs_shared = 0;
    // On a loaded machine the worker can wake too late to take part in thousands of short runs in a
    // row (the caller then does them all, which is allowed): keep running until it has shared one.
    for (int run = 0; run < 3000 || (runs_shared == 0 && run < 1000000); ++run) {
        const int tasks = 2 + run % 63;
        pool.run(tasks, [&](int task) {
            slots[task] = TaskPool::slot();
            for (volatile int spin = 0; spin < 200;) spin = spin + 1;
        });
        const auto first_worker = std::find(slots.begin(), slots.begin() + tasks, 1);
        ASSERT_TRUE(std::all_of(first_worker, slots.begin() + tasks, [](int slot) { return slot == 1; }))
            << "run " << run << ": a caller's task after the worker's first";
        runs_shared += first_worker != slots.begin() && first_worker != slots.begin() + tasks ? 1 : 0;
    }
    EXPECT_GT(runs_shared, 0) << "the worker never took part";
}

// Ops are cut into two chunks per thread, large products into four (a smaller last chunk leaves the
// other threads idle for less time), never more chunks than units and one below kMinParallelWork.
TEST(ChunkCount, TwoChunksPerThreadAndFourForLargeProducts) {
    EXPECT_EQ(chunk_count(2, 4096, kMinParallelWork - 1, 8), 1);
    EXPECT_EQ(chunk_count(1, 4096, kFineWork, 8), 1);
    EXPECT_EQ(chunk_count(2, 4096, kMinParallelWork, 8), 2 * kChunksPerThread);
    EXPECT_EQ(chunk_count(2, 4096, kFineWork - 1, 8), 2 * kChunksPerThread);
    EXPECT_EQ(chunk_count(2, 4096, kFineWork, 8), 2 * kFineChunksPerThread);
    EXPECT_EQ(chunk_count(4, 4096, kFineWork, 8), 4 * kFineChunksPerThread);
    EXPECT_EQ(chunk_count(2, 40, kFineWork, 8), 5);  // 40 rows in multiples of 8: 5 units
    const Range last = share(40, 4, 5, 8), first = share(40, 0, 5, 8);
    EXPECT_EQ(first.begin, 0);
    EXPECT_EQ(first.end, 8);
    EXPECT_EQ(last.begin, 32);
    EXPECT_EQ(last.end, 40);
}

// A training op gives bit-identical results when run again with the same thread count.
TEST(FastOpsDeterminism, SameThreadsSameBits) {
    const int n = 4096, d = 64;
    const Floats x = random_tensor(n * d, 19), dy = random_tensor(n * d, 20), w = random_tensor(d, 21),
                 b = random_tensor(d, 22);
    CpuBackend fast(2);
    Floats y(n * d), stats(2 * n);
    fast.norm_forward(NormType::LayerNorm, y.data(), stats.data(), x.data(), w.data(), b.data(), {}, n, d,
                      1e-5f);
    auto gradients = [&] {
        Floats dx(n * d), dw(d, 0.0f), db(d, 0.0f);
        fast.norm_backward(NormType::LayerNorm, dx.data(), dw.data(), db.data(), nullptr, dy.data(), x.data(),
                           stats.data(), w.data(), {}, n, d, false);
        dx.insert(dx.end(), dw.begin(), dw.end());
        dx.insert(dx.end(), db.begin(), db.end());
        return dx;
    };
    const Floats first = gradients();
    for (int again = 0; again < 20; ++again) ASSERT_EQ(gradients(), first);
}

INSTANTIATE_TEST_SUITE_P(ThreadsAndSizes, FastOps,
                         ::testing::Values(Case{1, 24}, Case{2, 24}, Case{1, 1000}, Case{2, 1000},
                                           Case{2, 4096}, Case{1, 1000, GemmKernel::own, GemmKernel::own},
                                           Case{2, 4096, GemmKernel::own, GemmKernel::own},
                                           Case{1, 1000, GemmKernel::library, GemmKernel::library},
                                           Case{2, 4096, GemmKernel::library, GemmKernel::library}));

}  // namespace
}  // namespace normlab
