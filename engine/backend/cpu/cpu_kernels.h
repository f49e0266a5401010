// Per-row maths shared by the reference and the fast CPU ops (embedding rows, norms, cross-entropy,
// attention over depth), so
// both paths compute the very same formula and differ only in how they split the work. The per-element
// terms (activations, optimizer updates, norm and loss terms) live in kernel_maths.h, shared with CUDA.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "engine/backend/backend.h"
#include "engine/backend/kernel_maths.h"

namespace normlab {

// Eight interleaved lanes and a tail added in the one fixed order every lane sum uses.
inline double combine_lanes(const double* lanes, double tail) {
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7])) +
           tail;
}

// The sum of term(i) over [0, count) in eight interleaved double lanes, added in a fixed order: it
// vectorises without reassociation, and the result depends only on the terms, not on who calls it.
template <class Index, class Term>
inline double lane_sum(Index count, Term term) {
    double lanes[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    Index i = 0;
    for (; i + 8 <= count; i += 8) {
        for (int lane = 0; lane < 8; ++lane) lanes[lane] += term(i + lane);
    }
    double tail = 0.0;
    for (; i < count; ++i) tail += term(i);
    return combine_lanes(lanes, tail);
}

// lane_sum of x[i] and of x[i]^2 in one pass over x: {sum, sum of squares}, each bit for bit what
// lane_sum gives for it alone.
template <class Index>
inline std::array<double, 2> lane_sum_and_squares(const float* x, Index count) {
    double values[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double squares[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    Index i = 0;
    for (; i + 8 <= count; i += 8) {
        for (int lane = 0; lane < 8; ++lane) {
            const double value = x[i + lane];
            values[lane] += value;
            squares[lane] += value * value;
        }
    }
    double value_tail = 0.0, square_tail = 0.0;
    for (; i < count; ++i) {
        const double value = x[i];
        value_tail += value;
        square_tail += value * value;
    }
    return {combine_lanes(values, value_tail), combine_lanes(squares, square_tail)};
}

// One row of the embedding: out = token_row + position_row.
inline void embedding_row(float* out, const float* token_row, const float* position_row, int d) {
    if (!position_row) {  // model.position rope or none: the token embedding alone
        std::copy(token_row, token_row + d, out);
        return;
    }
    for (int i = 0; i < d; ++i) out[i] = token_row[i] + position_row[i];
}

// One row of p = position's RoPE (Backend::rope): each head's pairs (i, i + head_dim / 2) turned by the
// same angle, computed once per pair.
inline void rope_row(float* row, int heads, int head_dim, int position, float theta, bool inverse) {
    const int half = head_dim / 2;
    for (int pair = 0; pair < half; ++pair) {
        const double angle = rope_angle(position, pair, head_dim, theta, inverse);
        for (int h = 0; h < heads; ++h) rope_turn(row + static_cast<size_t>(h) * head_dim, pair, half, angle);
    }
}

// One row of grouped-query attention's repeat (Backend::repeat_heads): head h of out is head h / group of in.
inline void repeat_heads_row(float* out, const float* in, HeadGroups heads) {
    const int head_dim = heads.head_dim;
    for (int h = 0; h < heads.kv_heads * heads.group; ++h) {
        const float* source = in + static_cast<size_t>(h / heads.group) * head_dim;
        std::copy(source, source + head_dim, out + static_cast<size_t>(h) * head_dim);
    }
}

// One row of its backward (Backend::sum_head_groups): head g of out is the sum of heads g x group ..
// (g + 1) x group - 1 of in, added in head order.
inline void sum_head_groups_row(float* out, const float* in, HeadGroups heads) {
    const int head_dim = heads.head_dim, group = heads.group;
    for (int g = 0; g < heads.kv_heads; ++g) {
        const float* first = in + static_cast<size_t>(g) * group * head_dim;
        for (int i = 0; i < head_dim; ++i) {
            float total = first[i];
            for (int j = 1; j < group; ++j) total += first[static_cast<size_t>(j) * head_dim + i];
            out[static_cast<size_t>(g) * head_dim + i] = total;
        }
    }
}

// One row of LayerNorm / RMSNorm / DyT: y = norm(x) with double accumulators; stats gets (mean, rstd).
// A frozen_rstd > 0 (LayerNorm / RMSNorm) replaces the row's own 1/std (norm-free inference).
inline void norm_forward_row(NormType type, float* out, float* stats, const float* in, const float* w,
                             const float* b, float dyt_alpha, int d, float eps, float frozen_rstd = 0.0f) {
    if (type == NormType::DyT) {
        for (int i = 0; i < d; ++i) out[i] = dyt_value(in[i], w[i], b[i], dyt_alpha);
        return;
    }
    const double mean = type == NormType::LayerNorm
                            ? lane_sum(d, [&](int i) { return static_cast<double>(in[i]); }) / d
                            : 0.0;
    const double rstd =
        frozen_rstd > 0.0f
            ? frozen_rstd
            : 1.0 / std::sqrt(lane_sum(d, [&](int i) { return (in[i] - mean) * (in[i] - mean); }) / d + eps);
    stats[0] = static_cast<float>(mean);
    stats[1] = static_cast<float>(rstd);
    const bool has_bias = type == NormType::LayerNorm && b;  // RMSNorm and QK-norm have none (b null)
    for (int i = 0; i < d; ++i) out[i] = norm_value(type, in[i], mean, rstd, w[i], has_bias ? b[i] : 0.0f);
}

// One row of a norm's backward pass: writes (or adds to) grad_in, adds the gain gradient to partial[0, d),
// the bias gradient to partial[d, 2d) when has_bias, and returns DyT's alpha-gradient term (else 0).
// With frozen_scale the row's scale is a constant (no gradient path through it).
inline double norm_backward_row(NormType type, float* grad_in, double* partial, const float* grad_out,
                                const float* in, const float* stats, const float* w, float dyt_alpha, int d,
                                bool has_bias, bool accumulate, bool frozen_scale = false) {
    if (type == NormType::DyT) {
        double alpha_sum = 0.0;
        for (int i = 0; i < d; ++i) {
            const float t = std::tanh(dyt_alpha * in[i]);
            partial[i] += grad_out[i] * t;
            if (has_bias) partial[d + i] += grad_out[i];
            const float dpre = dyt_pre_grad(grad_out[i], w[i], t);
            alpha_sum += static_cast<double>(dpre) * in[i];
            const float value = dpre * dyt_alpha;
            grad_in[i] = accumulate ? grad_in[i] + value : value;
        }
        return alpha_sum;
    }
    const double mean = stats[0];
    const double rstd = stats[1];
    auto xhat = [&](int i) { return (in[i] - mean) * rstd; };
    auto dxhat = [&](int i) { return static_cast<double>(grad_out[i]) * w[i]; };
    for (int i = 0; i < d; ++i) partial[i] += grad_out[i] * xhat(i);
    if (has_bias) {
        for (int i = 0; i < d; ++i) partial[d + i] += grad_out[i];
    }
    const double mean_dxhat = type == NormType::LayerNorm ? lane_sum(d, dxhat) / d : 0.0;
    const double mean_dxhat_xhat =
        frozen_scale ? 0.0 : lane_sum(d, [&](int i) { return dxhat(i) * xhat(i); }) / d;
    // the input gradient per element in float arithmetic (the row sums above are double)
    const float mean_f = static_cast<float>(mean), rstd_f = static_cast<float>(rstd);
    const float mean_dxhat_f = static_cast<float>(mean_dxhat);
    const float mean_dxhat_xhat_f = static_cast<float>(mean_dxhat_xhat);
    for (int i = 0; i < d; ++i) {
        const float value = norm_input_grad(rstd_f, grad_out[i] * w[i], (in[i] - mean_f) * rstd_f,
                                            mean_dxhat_f, mean_dxhat_xhat_f);
        grad_in[i] = accumulate ? grad_in[i] + value : value;
    }
    return 0.0;
}

// One scored row of softmax cross-entropy: its loss, log Z (Z = sum of exp(logits)), its logits' sum
// and largest value, and whether the argmax is the target.
struct CrossEntropyRow {
    double loss = 0.0;
    double log_z = 0.0;
    double logit_sum = 0.0;
    float logit_max = 0.0f;
    bool correct = false;
};

// One row of softmax cross-entropy (target >= 0), writing the gradient of loss + z_loss (log Z)^2,
// scaled by inverse_scored, to grad when it is not null.
inline CrossEntropyRow cross_entropy_row(float* grad, const float* in, int target, int vocab,
                                         float inverse_scored, float z_loss) {
    int best = 0;
    for (int j = 1; j < vocab; ++j) best = in[j] > in[best] ? j : best;
    const float row_max = in[best];
    double total = 0.0, logit_sum = 0.0;
    for (int j = 0; j < vocab; ++j) {
        total += std::exp(static_cast<double>(in[j] - row_max));
        logit_sum += in[j];
    }
    const double log_total = std::log(total);
    CrossEntropyRow row{log_total - (in[target] - row_max), row_max + log_total, logit_sum, row_max,
                        best == target};
    if (grad) {
        const float softmax_scale = z_loss_softmax_scale(z_loss, row.log_z);
        for (int j = 0; j < vocab; ++j)
            grad[j] =
                cross_entropy_grad(in[j], row_max, log_total, j == target, inverse_scored, softmax_scale);
    }
    return row;
}

// The totals of scored rows, added in the order rows (or chunks of rows) are given.
struct CrossEntropyTotals {
    double loss = 0.0, correct = 0.0, z_term = 0.0, log_z = 0.0, log_z_max_abs = 0.0, logit_sum = 0.0;
    double logit_max = -std::numeric_limits<double>::infinity();

    void add(const CrossEntropyRow& row, float z_loss) {
        loss += row.loss;
        correct += row.correct ? 1.0 : 0.0;
        z_term += static_cast<double>(z_loss) * row.log_z * row.log_z;
        log_z += row.log_z;
        log_z_max_abs = std::max(log_z_max_abs, std::fabs(row.log_z));
        logit_sum += row.logit_sum;
        logit_max = std::max(logit_max, static_cast<double>(row.logit_max));
    }
    void add(const CrossEntropyTotals& other) {
        loss += other.loss;
        correct += other.correct;
        z_term += other.z_term;
        log_z += other.log_z;
        log_z_max_abs = std::max(log_z_max_abs, other.log_z_max_abs);
        logit_sum += other.logit_sum;
        logit_max = std::max(logit_max, other.logit_max);
    }
    Backend::CrossEntropyResult result(int64_t scored) const {
        return {loss,          scored,    static_cast<int64_t>(correct), z_term, log_z,
                log_z_max_abs, logit_sum, scored > 0 ? logit_max : 0.0};
    }
};

// What Backend::round_to_format did to a range of values: counts of overflowed and underflowed values
// and the bits of the largest finite |x| (format_rounding.h's finite_magnitude_bits), gathered per range
// (chunk) in a loop that vectorises, and added into the op's tally once.
struct RoundingTally {
    uint64_t overflowed = 0, underflowed = 0;
    uint32_t max_magnitude_bits = 0;

    // Rounds src[0, count) into dst (nullptr: measures only; src itself: in place), counting as it goes.
    // 32-bit counters, a hoisted rule and one loop per case (in place, apart, none: no aliasing for the
    // compiler to check) keep the loops vectorised; a range holds fewer than 2^32 values.
    void round(float* dst, const float* src, size_t count, const FormatLimits& format) {
        const RoundingRule rule = rounding_rule(format);
        uint32_t over = 0, under = 0, max_bits = 0;
        auto count_one = [&](const RoundedValue& r, float x) {
            over += r.overflowed;
            under += r.underflowed;
            max_bits = std::max(max_bits, finite_magnitude_bits(x));
            return r.value;
        };
        if (dst == src) {
            for (size_t i = 0; i < count; ++i) dst[i] = count_one(round_with(rule, dst[i]), dst[i]);
        } else if (dst) {
            round_apart(dst, src, count, rule, count_one);
        } else {
            for (size_t i = 0; i < count; ++i) count_one(round_with(rule, src[i]), src[i]);
        }
        add({over, under, max_bits});
    }
    template <class Count>
    static void round_apart(float* __restrict dst, const float* __restrict src, size_t count,
                            const RoundingRule& rule, Count& count_one) {
        for (size_t i = 0; i < count; ++i) dst[i] = count_one(round_with(rule, src[i]), src[i]);
    }
    void add(const RoundingTally& other) {
        overflowed += other.overflowed;
        underflowed += other.underflowed;
        max_magnitude_bits = std::max(max_magnitude_bits, other.max_magnitude_bits);
    }
    void add_to(float* tally) const {
        tally[0] += static_cast<float>(overflowed);
        tally[1] += static_cast<float>(underflowed);
        tally[2] = std::max(tally[2], bits_float(max_magnitude_bits));
    }
};

// Attention over depth, one token's row r of `rows` (sources are `rows` rows apart; values `width` floats
// a row): the softmax over sources, its backward, the weighted sum and its backward (sources in order).
inline void depth_softmax_row(float* p, const float* logits, int sources, size_t rows, size_t r) {
    float largest = logits[r];
    for (int s = 1; s < sources; ++s) largest = std::max(largest, logits[s * rows + r]);
    double total = 0.0;
    for (int s = 0; s < sources; ++s) total += std::exp(static_cast<double>(logits[s * rows + r] - largest));
    for (int s = 0; s < sources; ++s)
        p[s * rows + r] =
            static_cast<float>(std::exp(static_cast<double>(logits[s * rows + r] - largest)) / total);
}

inline void depth_softmax_backward_row(float* dlogits, const float* dp, const float* p, int sources,
                                       size_t rows, size_t r) {
    double expected = 0.0;
    for (int s = 0; s < sources; ++s) expected += static_cast<double>(p[s * rows + r]) * dp[s * rows + r];
    for (int s = 0; s < sources; ++s)
        dlogits[s * rows + r] = static_cast<float>(p[s * rows + r] * (dp[s * rows + r] - expected));
}

inline void depth_mix_row(float* h, const float* p, const float* v, int sources, size_t rows, size_t width,
                          size_t r) {
    float* out = h + r * width;
    std::fill(out, out + width, 0.0f);
    for (int s = 0; s < sources; ++s) {
        const float weight = p[s * rows + r];
        const float* row = v + (s * rows + r) * width;
        for (size_t c = 0; c < width; ++c) out[c] += weight * row[c];
    }
}

inline void depth_mix_backward_row(float* dv, float* dp, const float* dh, const float* p, const float* v,
                                   int sources, size_t rows, size_t width, size_t r) {
    const float* grad = dh + r * width;
    for (int s = 0; s < sources; ++s) {
        const size_t at = (s * rows + r) * width;
        const float weight = p[s * rows + r];
        double dot = 0.0;
        for (size_t c = 0; c < width; ++c) {
            dot += static_cast<double>(grad[c]) * v[at + c];
            dv[at + c] += weight * grad[c];
        }
        dp[s * rows + r] = static_cast<float>(dot);
    }
}

}  // namespace normlab
