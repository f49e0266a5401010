// Finite-difference checks of every CPU backend op's backward pass (linear, embedding, the three norms,
// attention, activations, the gated FFN's product, RoPE, attention over depth, residual sums,
// cross-entropy) on small random inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "tests/engine/gradient_check.h"

namespace normlab {
namespace {

using testing::expect_gradient_matches;
using testing::random_tensor;
using testing::weighted_sum;

class OpGradients : public ::testing::Test {
  protected:
    CpuBackend backend{2};
};

TEST_F(OpGradients, LinearInputWeightAndBias) {
    const int n = 5, in = 4, out = 3;
    auto x = random_tensor(n * in, 1), w = random_tensor(out * in, 2), b = random_tensor(out, 3);
    const auto weights = random_tensor(n * out, 4);
    std::vector<float> y(n * out);
    auto objective = [&] {
        backend.linear_forward(y.data(), x.data(), w.data(), b.data(), n, in, out);
        return weighted_sum(y, weights);
    };
    std::vector<float> dx(n * in, 0.0f), dw(out * in, 0.0f), db(out, 0.0f);
    backend.linear_backward(dx.data(), dw.data(), db.data(), weights.data(), x.data(), w.data(), n, in, out,
                            false);
    expect_gradient_matches("linear dx", x, dx, objective);
    expect_gradient_matches("linear dW", w, dw, objective);
    expect_gradient_matches("linear db", b, db, objective);
    // accumulate_dx adds to what is there
    std::vector<float> accumulated(n * in, 1.0f);
    std::vector<float> dw2(out * in, 0.0f);
    backend.linear_backward(accumulated.data(), dw2.data(), nullptr, weights.data(), x.data(), w.data(), n,
                            in, out, true);
    for (int i = 0; i < n * in; ++i) EXPECT_NEAR(accumulated[i], dx[i] + 1.0f, 1e-5f);
}

TEST_F(OpGradients, Embedding) {
    const int batch = 2, seq = 3, d = 4, vocab = 5;
    const std::vector<int32_t> tokens = {0, 3, 3, 4, 1, 0};
    auto wte = random_tensor(vocab * d, 5), wpe = random_tensor(seq * d, 6);
    const auto weights = random_tensor(batch * seq * d, 7);
    std::vector<float> x(batch * seq * d);
    auto objective = [&] {
        backend.embedding_forward(x.data(), tokens.data(), wte.data(), wpe.data(), batch, seq, d);
        return weighted_sum(x, weights);
    };
    std::vector<float> dwte(vocab * d, 0.0f), dwpe(seq * d, 0.0f);
    backend.embedding_backward(dwte.data(), dwpe.data(), weights.data(), tokens.data(), batch, seq, d);
    expect_gradient_matches("embedding dwte", wte, dwte, objective);
    expect_gradient_matches("embedding dwpe", wpe, dwpe, objective);
}

// model.position rope / none: no wpe, so the embedding is the token's row and dwpe is not written.
TEST_F(OpGradients, EmbeddingWithoutPositions) {
    const int batch = 2, seq = 3, d = 4, vocab = 5;
    const std::vector<int32_t> tokens = {0, 3, 3, 4, 1, 0};
    auto wte = random_tensor(vocab * d, 5);
    const auto weights = random_tensor(batch * seq * d, 7);
    std::vector<float> x(batch * seq * d);
    auto objective = [&] {
        backend.embedding_forward(x.data(), tokens.data(), wte.data(), nullptr, batch, seq, d);
        return weighted_sum(x, weights);
    };
    objective();
    for (int i = 0; i < d; ++i) EXPECT_EQ(x[d + i], wte[3 * d + i]);
    std::vector<float> dwte(vocab * d, 0.0f);
    backend.embedding_backward(dwte.data(), nullptr, weights.data(), tokens.data(), batch, seq, d);
    expect_gradient_matches("embedding dwte without wpe", wte, dwte, objective);
}

// RoPE turns dimensions i and i + head_dim / 2 of each head (rotate_half, not interleaved pairs) by
// position x theta^(-2i / head_dim); the inverse turn is its backward.
TEST_F(OpGradients, RopeTurnsHalvesAndItsInverseIsTheBackward) {
    const int heads = 2, head_dim = 4, batch = 2, seq = 3, rows = batch * seq, stride = heads * head_dim + 3;
    std::vector<float> one(stride, 0.0f);
    one[0] = 1.0f;  // head 0: (1, 0, 0, 1)
    one[3] = 1.0f;
    std::vector<float> turned(static_cast<size_t>(rows) * stride, 0.0f);
    std::copy(one.begin(), one.end(), turned.begin() + 2 * stride);  // row 2: position 2
    backend.rope(turned.data(), stride, rows, seq, heads, head_dim, 100.0f, false);
    const float* row = turned.data() + 2 * stride;
    EXPECT_NEAR(row[0], std::cos(2.0), 1e-6);  // pair 0 turns by 2 x 100^0
    EXPECT_NEAR(row[2], std::sin(2.0), 1e-6);
    EXPECT_NEAR(row[1], -std::sin(0.2), 1e-6);  // pair 1 by 2 x 100^(-1/2)
    EXPECT_NEAR(row[3], std::cos(0.2), 1e-6);

    auto x = random_tensor(static_cast<size_t>(rows) * stride, 8);
    const auto weights = random_tensor(x.size(), 9);
    std::vector<float> y(x.size());
    auto objective = [&] {
        y = x;
        backend.rope(y.data(), stride, rows, seq, heads, head_dim, 100.0f, false);
        return weighted_sum(y, weights);
    };
    objective();
    for (int i = 0; i < stride; ++i) EXPECT_EQ(y[i], x[i]) << "position 0 does not turn";
    std::vector<float> dx = weights;
    backend.rope(dx.data(), stride, rows, seq, heads, head_dim, 100.0f, true);
    expect_gradient_matches("rope dx", x, dx, objective);
}

// Grouped-query attention's repeat (query head h reads key/value head h / group) and its backward, the
// sum of each group's gradients.
TEST_F(OpGradients, RepeatedHeadsAndTheirGroupSums) {
    const int rows = 3, kv_heads = 2, group = 3, head_dim = 2, stride = kv_heads * head_dim + 5;
    const int width = kv_heads * group * head_dim;
    auto src = random_tensor(static_cast<size_t>(rows) * stride, 51);
    const auto weights = random_tensor(static_cast<size_t>(rows) * width, 52);
    std::vector<float> repeated(weights.size());
    auto objective = [&] {
        backend.repeat_heads(repeated.data(), src.data(), stride, {rows, kv_heads, group, head_dim});
        return weighted_sum(repeated, weights);
    };
    objective();
    for (int h = 0; h < kv_heads * group; ++h)  // row 1, head h: source head h / 3
        EXPECT_EQ(repeated[width + h * head_dim + 1], src[stride + (h / group) * head_dim + 1]) << h;
    std::vector<float> grad(src.size(), 0.0f);
    backend.sum_head_groups(grad.data(), stride, weights.data(), {rows, kv_heads, group, head_dim});
    for (int row = 0; row < rows; ++row)  // the padding after each row's heads is not written
        for (int i = kv_heads * head_dim; i < stride; ++i) EXPECT_EQ(grad[row * stride + i], 0.0f);
    expect_gradient_matches("repeated heads", src, grad, objective);
}

class GatedGradients : public OpGradients, public ::testing::WithParamInterface<FeedForward> {};

TEST_P(GatedGradients, GateAndUp) {
    auto gate = random_tensor(40, 41, 2.0), up = random_tensor(40, 42);
    const auto weights = random_tensor(40, 43);
    std::vector<float> h(40);
    auto objective = [&] {
        backend.gated_forward(GetParam(), h.data(), gate.data(), up.data(), h.size());
        return weighted_sum(h, weights);
    };
    std::vector<float> dgate(40), dup = weights;  // dup aliases dh, as in the model
    backend.gated_backward(GetParam(), dgate.data(), dup.data(), dup.data(), gate.data(), up.data(),
                           h.size());
    expect_gradient_matches("gated dgate", gate, dgate, objective, 1e-2f, 2e-3);
    expect_gradient_matches("gated dup", up, dup, objective, 1e-2f, 2e-3);
    const float g = 1.5f;
    const float silu = g / (1.0f + std::exp(-g));
    const float gelu = 0.5f * g * (1.0f + std::erf(g / std::sqrt(2.0f)));
    float value = 0.0f;
    const float two = 2.0f;
    backend.gated_forward(GetParam(), &value, &g, &two, 1);
    EXPECT_NEAR(value, 2.0f * (GetParam() == FeedForward::SwiGlu ? silu : gelu), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Both, GatedGradients, ::testing::Values(FeedForward::SwiGlu, FeedForward::GeGlu),
                         [](const auto& info) { return to_string(info.param); });

class NormGradients : public OpGradients, public ::testing::WithParamInterface<NormType> {};

TEST_P(NormGradients, InputGainBiasAndAlpha) {
    const NormType type = GetParam();
    const int n = 4, d = 6;
    auto x = random_tensor(n * d, 11, 2.0), w = random_tensor(d, 12), b = random_tensor(d, 13);
    for (int i = 0; i < d; ++i) x[i] += 3.0f;  // a row with a large mean
    std::vector<float> alpha = {0.7f};
    const auto weights = random_tensor(n * d, 14);
    std::vector<float> y(n * d), stats(2 * n);
    auto objective = [&] {
        backend.norm_forward(type, y.data(), stats.data(), x.data(), w.data(), b.data(), {0.0f, alpha.data()},
                             n, d, 1e-5f);
        return weighted_sum(y, weights);
    };
    objective();
    std::vector<float> dx(n * d, 0.0f), dw(d, 0.0f), db(d, 0.0f), dalpha(1, 0.0f);
    backend.norm_backward(type, dx.data(), dw.data(), db.data(), dalpha.data(), weights.data(), x.data(),
                          stats.data(), w.data(), {0.0f, alpha.data()}, n, d, false);
    expect_gradient_matches("norm dx", x, dx, objective, 1e-2f, 3e-3);
    expect_gradient_matches("norm dw", w, dw, objective);
    if (type != NormType::RmsNorm) expect_gradient_matches("norm db", b, db, objective);
    if (type == NormType::DyT) expect_gradient_matches("DyT dalpha", alpha, dalpha, objective);
}

INSTANTIATE_TEST_SUITE_P(AllNorms, NormGradients,
                         ::testing::Values(NormType::LayerNorm, NormType::RmsNorm, NormType::DyT),
                         [](const auto& info) { return to_string(info.param); });

// Naive double-precision norm backward over all rows at once: what the chunked CPU version must equal.
struct NormReference {
    std::vector<double> dx, dw, db;
    double dalpha = 0.0;
};

NormReference naive_norm_backward(NormType type, const std::vector<float>& x, const std::vector<float>& w,
                                  const std::vector<float>& dy, double alpha, int n, int d, double eps) {
    NormReference r{std::vector<double>(x.size()), std::vector<double>(d), std::vector<double>(d), 0.0};
    for (int row = 0; row < n; ++row) {
        const float* in = x.data() + static_cast<size_t>(row) * d;
        const float* g = dy.data() + static_cast<size_t>(row) * d;
        double* out = r.dx.data() + static_cast<size_t>(row) * d;
        if (type == NormType::DyT) {
            for (int i = 0; i < d; ++i) {
                const double t = std::tanh(alpha * in[i]);
                r.dw[i] += g[i] * t;
                r.db[i] += g[i];
                const double dpre = g[i] * w[i] * (1.0 - t * t);
                r.dalpha += dpre * in[i];
                out[i] = dpre * alpha;
            }
            continue;
        }
        double mean = 0.0;
        if (type == NormType::LayerNorm) {
            for (int i = 0; i < d; ++i) mean += in[i];
            mean /= d;
        }
        double second = 0.0;
        for (int i = 0; i < d; ++i) second += (in[i] - mean) * (in[i] - mean);
        const double rstd = 1.0 / std::sqrt(second / d + eps);
        std::vector<double> xhat(d), dxhat(d);
        double mean_dxhat = 0.0, mean_dxhat_xhat = 0.0;
        for (int i = 0; i < d; ++i) {
            xhat[i] = (in[i] - mean) * rstd;
            dxhat[i] = static_cast<double>(g[i]) * w[i];
            r.dw[i] += g[i] * xhat[i];
            r.db[i] += g[i];
            mean_dxhat += dxhat[i] / d;
            mean_dxhat_xhat += dxhat[i] * xhat[i] / d;
        }
        if (type == NormType::RmsNorm) mean_dxhat = 0.0;
        for (int i = 0; i < d; ++i) out[i] = rstd * (dxhat[i] - mean_dxhat - xhat[i] * mean_dxhat_xhat);
    }
    return r;
}

class NormChunking : public OpGradients, public ::testing::WithParamInterface<NormType> {};

TEST_P(NormChunking, ManyRowsMatchANaiveReferenceOnAnyThreadCount) {
    // 103 rows: three full chunks of 32 and a partial one, so the per-chunk partial sums of the gain,
    // bias and DyT alpha gradients and their in-order reduction are all exercised.
    const NormType type = GetParam();
    const int n = 103, d = 7;
    const double eps = 1e-5;
    auto x = random_tensor(n * d, 31, 1.5), w = random_tensor(d, 32), b = random_tensor(d, 33);
    const auto dy = random_tensor(n * d, 34);
    for (int row = 0; row < n; row += 10) x[static_cast<size_t>(row) * d] += 4.0f;  // some off-centre rows
    std::vector<float> alpha = {0.7f};
    std::vector<float> reference_dw_start(d, 0.25f);  // gradients accumulate into what is there
    const NormReference expected = naive_norm_backward(type, x, w, dy, alpha[0], n, d, eps);
    std::vector<std::vector<float>> dw_by_threads;
    for (int threads : {1, 3}) {
        CpuBackend cpu(threads);
        std::vector<float> y(n * d), stats(2 * n);
        cpu.norm_forward(type, y.data(), stats.data(), x.data(), w.data(), b.data(), {0.0f, alpha.data()}, n,
                         d, static_cast<float>(eps));
        std::vector<float> dx(n * d, 0.0f), dw = reference_dw_start, db(d, 0.0f), dalpha(1, 0.0f);
        cpu.norm_backward(type, dx.data(), dw.data(), type == NormType::RmsNorm ? nullptr : db.data(),
                          dalpha.data(), dy.data(), x.data(), stats.data(), w.data(), {0.0f, alpha.data()}, n,
                          d, false);
        for (int i = 0; i < n * d; ++i)
            ASSERT_NEAR(dx[i], expected.dx[i], 2e-5 * (1.0 + std::fabs(expected.dx[i])));
        for (int i = 0; i < d; ++i) {
            EXPECT_NEAR(dw[i], 0.25 + expected.dw[i], 1e-4 * (1.0 + std::fabs(expected.dw[i]))) << "dw " << i;
            if (type != NormType::RmsNorm) {
                EXPECT_NEAR(db[i], expected.db[i], 1e-4 * (1.0 + std::fabs(expected.db[i]))) << "db " << i;
            }
        }
        if (type == NormType::DyT) {
            EXPECT_NEAR(dalpha[0], expected.dalpha, 1e-4 * (1.0 + std::fabs(expected.dalpha)));
        }
        dw_by_threads.push_back(dw);
    }
    EXPECT_EQ(dw_by_threads[0], dw_by_threads[1]) << "fixed chunks: the same bits on 1 and 3 threads";
}

INSTANTIATE_TEST_SUITE_P(AllNorms, NormChunking,
                         ::testing::Values(NormType::LayerNorm, NormType::RmsNorm, NormType::DyT),
                         [](const auto& info) { return to_string(info.param); });

TEST_F(OpGradients, NormForwardMatchesFormulas) {
    const int d = 4;
    std::vector<float> x = {1.0f, 2.0f, 3.0f, 6.0f}, w = {1.0f, 2.0f, 1.0f, 1.0f},
                       b = {0.0f, 1.0f, 0.0f, 0.0f};
    std::vector<float> y(d), stats(2);
    backend.norm_forward(NormType::LayerNorm, y.data(), stats.data(), x.data(), w.data(), b.data(), {}, 1, d,
                         0.0f);
    // mean 3, population variance (4 + 1 + 0 + 9) / 4 = 3.5
    EXPECT_NEAR(y[0], -2.0 / std::sqrt(3.5), 1e-5);
    EXPECT_NEAR(y[1], 2.0 * -1.0 / std::sqrt(3.5) + 1.0, 1e-5);
    backend.norm_forward(NormType::RmsNorm, y.data(), stats.data(), x.data(), w.data(), b.data(), {}, 1, d,
                         0.0f);
    // mean square (1 + 4 + 9 + 36) / 4 = 12.5, no bias
    EXPECT_NEAR(y[1], 2.0 * 2.0 / std::sqrt(12.5), 1e-5);
    std::vector<float> alpha = {0.5f};
    backend.norm_forward(NormType::DyT, y.data(), stats.data(), x.data(), w.data(), b.data(),
                         {0.0f, alpha.data()}, 1, d, 0.0f);
    EXPECT_NEAR(y[3], std::tanh(3.0), 1e-6);
    EXPECT_NEAR(y[1], 2.0 * std::tanh(1.0) + 1.0, 1e-6);
}

TEST_F(OpGradients, CausalAttention) {
    const int batch = 2, seq = 4, heads = 2, head_dim = 3, d = heads * head_dim;
    auto qkv = random_tensor(batch * seq * 3 * d, 21);
    const auto weights = random_tensor(batch * seq * d, 22);
    std::vector<float> out(batch * seq * d), probs(batch * heads * seq * seq);
    auto objective = [&] {
        backend.attention_forward(out.data(), probs.data(), qkv.data(), batch, seq, heads, head_dim, {});
        return weighted_sum(out, weights);
    };
    objective();
    std::vector<float> dqkv(qkv.size(), 0.0f);
    backend.attention_backward(dqkv.data(), weights.data(), qkv.data(), probs.data(), batch, seq, heads,
                               head_dim);
    expect_gradient_matches("attention dqkv", qkv, dqkv, objective);
    // causality: the first query attends only to itself
    EXPECT_FLOAT_EQ(probs[0], 1.0f);
    for (int j = 1; j < seq; ++j) EXPECT_EQ(probs[j], 0.0f);
}

TEST_F(OpGradients, CrossAttentionWithMaskedMemory) {
    // q [n, d] from one source, k and v inside kv [n, 2d] from another; each query attends every key
    // j < keys (an encoder's memory of `keys` valid positions), and the gradients reach q, k and v.
    const int batch = 2, seq = 5, heads = 2, head_dim = 3, d = heads * head_dim, rows = batch * seq;
    for (const int keys : {2, 5}) {
        const AttentionShape shape{batch, seq, heads, head_dim, false, keys};
        auto q = random_tensor(rows * d, 23);
        auto kv = random_tensor(rows * 2 * d, 24);
        const auto weights = random_tensor(rows * d, 25);
        std::vector<float> out(rows * d), probs(batch * heads * seq * seq);
        auto objective = [&] {
            backend.attention_forward(out.data(), probs.data(),
                                      {q.data(), kv.data(), kv.data() + d, d, 2 * d}, shape, {});
            return weighted_sum(out, weights);
        };
        objective();
        std::vector<float> dq(q.size(), 5.0f), dkv(kv.size(), 5.0f);  // overwritten, not accumulated
        backend.attention_backward({dq.data(), dkv.data(), dkv.data() + d, d, 2 * d}, weights.data(),
                                   {q.data(), kv.data(), kv.data() + d, d, 2 * d}, probs.data(), shape);
        const std::string label = "cross-attention, " + std::to_string(keys) + " keys";
        expect_gradient_matches(label + " dq", q, dq, objective);
        expect_gradient_matches(label + " dkv", kv, dkv, objective);
        // every query (the last one too) attends exactly the first `keys` positions
        for (int t = 0; t < seq; ++t) {
            double total = 0.0;
            for (int j = 0; j < seq; ++j) {
                const float p = probs[static_cast<size_t>(t) * seq + j];
                if (j >= keys) {
                    EXPECT_EQ(p, 0.0f) << label << ": query " << t << " key " << j;
                }
                total += p;
            }
            EXPECT_NEAR(total, 1.0, 1e-6) << label;
        }
        // keys beyond the memory get no gradient
        for (int row = 0; row < rows; ++row) {
            if (row % seq < keys) continue;
            for (int c = 0; c < 2 * d; ++c)
                EXPECT_EQ(dkv[static_cast<size_t>(row) * 2 * d + c], 0.0f) << label;
        }
    }
}

TEST_F(OpGradients, AttentionStatisticsOfUniformAttention) {
    // q = k = 0 makes every row uniform over its causal prefix: entropy sum = sum_t ln(t + 1).
    const int batch = 1, seq = 4, heads = 1, head_dim = 2, d = 2;
    std::vector<float> qkv(seq * 3 * d, 0.0f), out(seq * d), probs(seq * seq);
    float entropy = 0.0f, largest = 0.0f;
    backend.attention_forward(out.data(), probs.data(), qkv.data(), batch, seq, heads, head_dim,
                              {&entropy, &largest});
    EXPECT_NEAR(entropy, std::log(1.0) + std::log(2.0) + std::log(3.0) + std::log(4.0), 1e-5);
    EXPECT_FLOAT_EQ(largest, 0.0f);
    // bidirectional over the first 3 keys: every row is uniform over 3 keys
    backend.attention_forward(out.data(), probs.data(), packed_qkv(qkv.data(), d),
                              {batch, seq, heads, head_dim, false, 3}, {&entropy, &largest});
    EXPECT_NEAR(entropy, 4 * std::log(3.0), 1e-5);
}

class ActivationGradients : public OpGradients, public ::testing::WithParamInterface<Activation> {};

TEST_P(ActivationGradients, Elementwise) {
    auto x = random_tensor(40, 31, 2.0);
    for (float& v : x) v += v > 0 ? 0.05f : -0.05f;  // keep ReLU's kink out of the difference stencil
    const auto weights = random_tensor(40, 32);
    std::vector<float> y(40);
    auto objective = [&] {
        backend.activation_forward(GetParam(), y.data(), x.data(), x.size());
        return weighted_sum(y, weights);
    };
    std::vector<float> dx(40);
    backend.activation_backward(GetParam(), dx.data(), weights.data(), x.data(), x.size());
    expect_gradient_matches("activation dx", x, dx, objective, 1e-2f, 2e-3);
}

INSTANTIATE_TEST_SUITE_P(Both, ActivationGradients,
                         ::testing::Values(Activation::Relu, Activation::Gelu, Activation::GeluTanh),
                         [](const auto& info) { return to_string(info.param); });

TEST_F(OpGradients, ResidualSumWithLearnableScales) {
    const size_t count = 20;
    auto x = random_tensor(count, 41), f = random_tensor(count, 42);
    std::vector<float> c = {1.7f}, a = {0.3f};
    const auto weights = random_tensor(count, 43);
    std::vector<float> s(count);
    auto objective = [&] {
        backend.residual_forward(s.data(), x.data(), f.data(), {0.0f, c.data()}, {0.0f, a.data()}, count);
        return weighted_sum(s, weights);
    };
    std::vector<float> dx(count), df(count), dc = {0.0f}, da = {0.0f};
    backend.residual_backward(dx.data(), df.data(), dc.data(), da.data(), weights.data(), x.data(), f.data(),
                              {0.0f, c.data()}, {0.0f, a.data()}, count);
    expect_gradient_matches("residual dx", x, dx, objective);
    expect_gradient_matches("residual df", f, df, objective);
    expect_gradient_matches("residual dc", c, dc, objective);
    expect_gradient_matches("residual da", a, da, objective);
}

// Attention over depth: h = sum_s softmax_s(logits) v_s, against the formula in double for every row,
// and the gradients of logits and values through both ops against finite differences.
TEST_F(OpGradients, DepthAttentionSoftmaxAndMix) {
    const int sources = 4, n = 3, d = 5;
    auto logits = random_tensor(sources * n, 40, 2.0), v = random_tensor(sources * n * d, 41);
    const auto weights = random_tensor(n * d, 42);
    std::vector<float> p(sources * n), h(n * d);
    auto objective = [&] {
        backend.depth_softmax_forward(p.data(), logits.data(), sources, n);
        backend.depth_mix_forward(h.data(), p.data(), v.data(), sources, n, d);
        return weighted_sum(h, weights);
    };
    objective();
    for (int r = 0; r < n; ++r) {
        double total = 0.0;
        for (int s = 0; s < sources; ++s) total += std::exp(static_cast<double>(logits[s * n + r]));
        for (int c = 0; c < d; ++c) {
            double expected = 0.0;
            for (int s = 0; s < sources; ++s)
                expected += std::exp(static_cast<double>(logits[s * n + r])) / total * v[(s * n + r) * d + c];
            EXPECT_NEAR(h[r * d + c], expected, 1e-5) << "row " << r << ", column " << c;
        }
    }
    std::vector<float> dv(v.size(), 0.0f), dp(p.size()), dlogits(p.size());
    backend.depth_mix_backward(dv.data(), dp.data(), weights.data(), p.data(), v.data(), sources, n, d);
    backend.depth_softmax_backward(dlogits.data(), dp.data(), p.data(), sources, n);
    expect_gradient_matches("depth attention dlogits", logits, dlogits, objective);
    expect_gradient_matches("depth attention dv", v, dv, objective);
    // dv accumulates; the softmax's backward may run in place over dp
    std::vector<float> accumulated(v.size(), 1.0f);
    backend.depth_mix_backward(accumulated.data(), dp.data(), weights.data(), p.data(), v.data(), sources, n,
                               d);
    for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(accumulated[i], dv[i] + 1.0f, 1e-6f);
    backend.depth_softmax_backward(dp.data(), dp.data(), p.data(), sources, n);
    for (size_t i = 0; i < dp.size(); ++i) EXPECT_EQ(dp[i], dlogits[i]);
}

TEST_F(OpGradients, CrossEntropyWithUnscoredRows) {
    const int n = 4, vocab = 5;
    auto logits = random_tensor(n * vocab, 51, 2.0);
    const std::vector<int32_t> targets = {2, -1, 0, 4};
    auto objective = [&] {
        std::vector<float> scratch(n * vocab);
        const auto result =
            backend.cross_entropy(scratch.data(), logits.data(), targets.data(), n, vocab, false, 0.0f);
        return result.loss_sum / static_cast<double>(result.scored);
    };
    std::vector<float> grad(n * vocab);
    const auto result =
        backend.cross_entropy(grad.data(), logits.data(), targets.data(), n, vocab, true, 0.0f);
    EXPECT_EQ(result.scored, 3);
    expect_gradient_matches("cross-entropy dlogits", logits, grad, objective);
    for (int j = 0; j < vocab; ++j) EXPECT_EQ(grad[vocab + j], 0.0f);
    // uniform logits give ln(vocab)
    std::vector<float> uniform(n * vocab, 0.0f), scratch(n * vocab);
    EXPECT_NEAR(backend.cross_entropy(scratch.data(), uniform.data(), targets.data(), n, vocab, false, 0.0f)
                        .loss_sum /
                    3.0,
                std::log(5.0), 1e-6);
}

// z-loss: the gradient of mean(cross-entropy + z (log Z)^2), and the output-logit sums against direct
// computation (unscored rows left out of every sum).
TEST_F(OpGradients, CrossEntropyWithZLossAndItsSums) {
    const int n = 4, vocab = 5;
    const float z = 0.3f;
    auto logits = random_tensor(n * vocab, 52, 2.0);
    const std::vector<int32_t> targets = {1, 3, -1, 0};
    auto objective = [&] {
        std::vector<float> scratch(n * vocab);
        const auto result =
            backend.cross_entropy(scratch.data(), logits.data(), targets.data(), n, vocab, false, z);
        return (result.loss_sum + result.z_loss_sum) / static_cast<double>(result.scored);
    };
    std::vector<float> grad(n * vocab);
    const auto result = backend.cross_entropy(grad.data(), logits.data(), targets.data(), n, vocab, true, z);
    expect_gradient_matches("cross-entropy + z-loss dlogits", logits, grad, objective);
    double log_z_sum = 0.0, log_z_max_abs = 0.0, z_sum = 0.0, logit_sum = 0.0, logit_max = -1e30;
    for (int row = 0; row < n; ++row) {
        if (targets[row] < 0) continue;
        double total = 0.0;
        for (int j = 0; j < vocab; ++j) {
            total += std::exp(static_cast<double>(logits[row * vocab + j]));
            logit_sum += logits[row * vocab + j];
            logit_max = std::max(logit_max, static_cast<double>(logits[row * vocab + j]));
        }
        const double log_z = std::log(total);
        log_z_sum += log_z;
        log_z_max_abs = std::max(log_z_max_abs, std::fabs(log_z));
        z_sum += z * log_z * log_z;
    }
    EXPECT_NEAR(result.log_z_sum, log_z_sum, 1e-6);
    EXPECT_NEAR(result.log_z_max_abs, log_z_max_abs, 1e-6);
    EXPECT_NEAR(result.z_loss_sum, z_sum, 1e-6);
    EXPECT_NEAR(result.logit_sum, logit_sum, 1e-5);
    EXPECT_NEAR(result.logit_max, logit_max, 1e-6);
}

TEST_F(OpGradients, SumSquaresOverSlices) {
    std::vector<float> values(40000);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7) - 3.0f;
    std::vector<double> out(2);
    backend.sum_squares(values.data(), {{0, 7}, {7, 35000}}, out.data());
    EXPECT_DOUBLE_EQ(out[0], 9 + 4 + 1 + 0 + 1 + 4 + 9);
    EXPECT_DOUBLE_EQ(out[1], 5000.0 * 28.0);
}

}  // namespace
}  // namespace normlab
