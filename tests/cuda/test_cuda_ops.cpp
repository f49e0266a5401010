// Every CUDA op against the CPU reference (CpuReferenceBackend) on random inputs, at relative 1e-4:
// each case lists its tensors as host values, runs the same op code on both backends (tensors copied
// into each backend's memory), and compares every tensor afterwards and any values returned to the host.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend/cpu/cpu_reference_backend.h"
#include "engine/backend/parity.h"
#include "engine/core/number_formats.h"
#include "tests/cuda/cuda_test_support.h"
#include "tests/engine/gradient_check.h"

namespace normlab {
namespace {

using Floats = std::vector<float>;
using Ints = std::vector<int32_t>;

// A float tensor's initial contents, made when a test runs (cases are listed at start-up, cheaply):
// given values, a constant, or normal(0, scale) draws plus an offset (absolute values if asked).
struct Tensor {
    Floats values;
    size_t count = 0;
    float value = 0.0f;
    uint64_t seed = 0;  // 0: constant
    double scale = 1.0;
    float offset = 0.0f;
    bool absolute = false;
    NumberFormat format = NumberFormat::Fp32;  // draws rounded to it (operands of native products)

    Tensor(Floats given) : values(std::move(given)), count(values.size()) {}
    Tensor(size_t n, float constant) : count(n), value(constant) {}
    Tensor(size_t n, uint64_t random_seed, double sigma, float shift, bool nonnegative)
        : count(n), seed(random_seed), scale(sigma), offset(shift), absolute(nonnegative) {}

    Floats make() const {
        if (!values.empty() || count == 0) return values;
        if (seed == 0) return Floats(count, value);
        Floats drawn = testing::random_tensor(count, seed, scale);
        for (float& x : drawn) x = (absolute ? std::abs(x) : x) + offset;
        round_to_format(drawn.data(), drawn.size(), format);
        return drawn;
    }
};

Tensor rnd(size_t count, uint64_t seed, double scale = 1.0, float offset = 0.0f, bool absolute = false) {
    return Tensor(count, seed, scale, offset, absolute);
}

Tensor rounded(Tensor tensor, NumberFormat format) {
    tensor.format = format;
    return tensor;
}

Tensor zeros(size_t count) {
    return Tensor(count, 0.0f);
}

Tensor filled(size_t count, float value) {
    return Tensor(count, value);
}

struct OpCase {
    std::string name;
    std::vector<Tensor> floats;  // initial contents of each float tensor
    std::vector<Ints> ints;      // initial contents of each int tensor
    // Runs the op; f[i] and t[i] point into the backend's memory. Returns the values the op handed back
    // to the host (cross-entropy totals, slice sums), if any.
    std::function<std::vector<double>(Backend& backend, float* const* f, int32_t* const* t)> run;
};

void PrintTo(const OpCase& op, std::ostream* out) {
    *out << op.name;
}

struct Outcome {
    std::vector<Floats> floats;
    std::vector<double> host;
};

Outcome run_case(Backend& backend, const OpCase& op, const std::vector<Floats>& initial) {
    std::vector<float*> floats;
    std::vector<int32_t*> ints;
    for (const Floats& values : initial) {
        floats.push_back(backend.allocate(values.size()));
        backend.upload(floats.back(), values.data(), values.size());
    }
    for (const Ints& values : op.ints) {
        ints.push_back(backend.allocate_ints(values.size()));
        backend.upload_ints(ints.back(), values.data(), values.size());
    }
    Outcome outcome;
    outcome.host = op.run(backend, floats.data(), ints.data());
    for (size_t i = 0; i < floats.size(); ++i) {
        outcome.floats.emplace_back(initial[i].size());
        backend.download(outcome.floats.back().data(), floats[i], initial[i].size());
    }
    for (float* pointer : floats) backend.release(pointer);
    for (int32_t* pointer : ints) backend.release(pointer);
    return outcome;
}

constexpr double kTolerance = 1e-4;

class CudaOpParity : public testing::CudaTestWithParam<OpCase> {};

TEST_P(CudaOpParity, MatchesCpuReference) {
    const OpCase& op = GetParam();
    std::vector<Floats> initial;
    for (const Tensor& tensor : op.floats) initial.push_back(tensor.make());
    CpuReferenceBackend reference(1);
    const Outcome expected = run_case(reference, op, initial);
    const Outcome actual = run_case(cuda(), op, initial);
    for (size_t i = 0; i < expected.floats.size(); ++i) {
        testing::expect_close(op.name + ", tensor " + std::to_string(i), actual.floats[i], expected.floats[i],
                              kTolerance);
    }
    ASSERT_EQ(actual.host.size(), expected.host.size());
    for (size_t i = 0; i < expected.host.size(); ++i) {
        EXPECT_NEAR(actual.host[i], expected.host[i], kTolerance * std::max(1.0, std::abs(expected.host[i])))
            << op.name << ", host value " << i;
    }
}

// Tokens in [0, vocab) (with repeats), or targets with every fourth position unscored (-1).
Ints token_ids(size_t count, int vocab, uint64_t seed, bool some_unscored) {
    Rng rng(seed);
    Ints ids(count);
    for (size_t i = 0; i < count; ++i) ids[i] = some_unscored && i % 4 == 3 ? -1 : rng.below(vocab);
    return ids;
}

std::string name_of(NormType type) {
    switch (type) {
        case NormType::LayerNorm:
            return "LayerNorm";
        case NormType::RmsNorm:
            return "RmsNorm";
        case NormType::DyT:
            return "DyT";
        case NormType::BatchNorm:
            return "BatchNorm";
        case NormType::PowerNorm:
            return "PowerNorm";
    }
    return "?";
}

std::string name_of(OptimizerKind kind) {
    switch (kind) {
        case OptimizerKind::Sgd:
            return "Sgd";
        case OptimizerKind::Adam:
            return "Adam";
        case OptimizerKind::AdamW:
            return "AdamW";
        case OptimizerKind::RAdam:
            return "RAdam";
    }
    return "Adam";
}

void add_memory_and_elementwise(std::vector<OpCase>& cases) {
    const size_t n = 70001;  // not a multiple of a block
    cases.push_back({"Fill", {rnd(1000, 1)}, {}, [](Backend& b, float* const* f, int32_t* const*) {
                         b.fill(f[0] + 3, 0.5f, 900);
                         b.fill(f[0] + 10, 0.0f, 5);
                         return std::vector<double>{};
                     }});
    cases.push_back(
        {"Copy", {rnd(777, 2), rnd(777, 3)}, {}, [](Backend& b, float* const* f, int32_t* const*) {
             b.copy(f[0], f[1], 777);
             return std::vector<double>{};
         }});
    cases.push_back({"CopyOverlapping", {rnd(1000, 4)}, {}, [](Backend& b, float* const* f, int32_t* const*) {
                         b.copy(f[0] + 10, f[0], 900);  // forwards over itself
                         b.copy(f[0], f[0] + 5, 100);   // backwards over itself
                         return std::vector<double>{};
                     }});
    cases.push_back({"Scale", {rnd(n, 5)}, {}, [n](Backend& b, float* const* f, int32_t* const*) {
                         b.scale(f[0], -1.7f, n);
                         return std::vector<double>{};
                     }});
    // Emulated precision's rounding: values from 2^-30 to 2^30 (fp16's and fp8's subnormals and overflow),
    // into another tensor, in place and measured only, each with a tally (the in-place one's largest |x|
    // is the input's). Host values: how many rounded values of both outputs differ in their bits from
    // round_to_format's (0 on both backends), then the tally. The outputs hold fp16's infinities, which a
    // relative comparison cannot take, so after the bitwise count they are zeroed for the tensor check.
    Floats awkward = testing::random_tensor(n, 13, 1.0);
    for (size_t i = 0; i < n; ++i) awkward[i] = std::ldexp(awkward[i], static_cast<int>(i % 61) - 30);
    for (const NumberFormat format : {NumberFormat::Bf16, NumberFormat::Fp16, NumberFormat::Fp8E4M3}) {
        cases.push_back({"RoundToFormat" + to_string(format),
                         {Tensor(awkward), zeros(n), zeros(3), zeros(3), Tensor(awkward), zeros(3)},
                         {},
                         [format, n, awkward](Backend& b, float* const* f, int32_t* const*) {
                             b.round_to_format(f[1], f[0], n, format_limits(format), f[2]);
                             b.round_to_format(f[4], f[4], n, format_limits(format), f[5]);
                             b.round_to_format(nullptr, f[0], n, format_limits(format), f[3]);
                             Floats rounded(n), in_place(n), tally(3);
                             b.download(rounded.data(), f[1], n);
                             b.download(in_place.data(), f[4], n);
                             b.download(tally.data(), f[2], 3);
                             double differ = 0.0;
                             for (size_t i = 0; i < n; ++i) {
                                 const uint32_t expected = float_bits(round_to_format(awkward[i], format));
                                 differ += (float_bits(rounded[i]) != expected) +
                                           (float_bits(in_place[i]) != expected);
                             }
                             b.fill(f[1], 0.0f, n);
                             b.fill(f[4], 0.0f, n);
                             return std::vector<double>{differ, tally[0], tally[1], tally[2]};
                         }});
    }
    // more elements than one grid of 65535 blocks x 256 threads covers: the grid-stride loops wrap
    const size_t huge = 65535ull * 256 + 4099;
    cases.push_back({"AddBeyondOneGrid",
                     {rnd(huge, 6), rnd(huge, 7)},
                     {},
                     [huge](Backend& b, float* const* f, int32_t* const*) {
                         b.add(f[0], f[1], huge);
                         return std::vector<double>{};
                     }});
    for (const Activation kind : {Activation::Relu, Activation::Gelu, Activation::GeluTanh}) {
        const std::string label = to_string(kind);
        cases.push_back({"ActivationForward" + label,
                         {rnd(n, 8, 2.0), zeros(n)},
                         {},
                         [kind, n](Backend& b, float* const* f, int32_t* const*) {
                             b.activation_forward(kind, f[1], f[0], n);
                             return std::vector<double>{};
                         }});
        cases.push_back({"ActivationBackward" + label,
                         {rnd(n, 9, 2.0), rnd(n, 10), zeros(n)},
                         {},
                         [kind, n](Backend& b, float* const* f, int32_t* const*) {
                             b.activation_backward(kind, f[2], f[1], f[0], n);
                             return std::vector<double>{};
                         }});
        cases.push_back({"ActivationBackwardInPlace" + label,
                         {rnd(n, 11, 2.0), rnd(n, 12)},
                         {},
                         [kind, n](Backend& b, float* const* f, int32_t* const*) {
                             b.activation_backward(kind, f[1], f[1], f[0],
                                                   n);  // dx aliases dy, as the model does
                             return std::vector<double>{};
                         }});
    }
}

void add_residuals(std::vector<OpCase>& cases) {
    const size_t n = 300001;  // more blocks than the 1024 partials: the reduction's grid-stride wraps
    for (const bool learnable : {false, true}) {
        const std::string label = learnable ? "Learnable" : "Constant";
        // f: x, f, s, scalars (c, a)
        cases.push_back(
            {"ResidualForward" + label,
             {rnd(n, 20), rnd(n, 21), zeros(n), Floats{0.8f, -1.3f}},
             {},
             [learnable, n](Backend& b, float* const* f, int32_t* const*) {
                 const ScaleRef c = learnable ? ScaleRef{0.0f, f[3]} : ScaleRef{1.7f, nullptr};
                 const ScaleRef a = learnable ? ScaleRef{0.0f, f[3] + 1} : ScaleRef{0.4f, nullptr};
                 b.residual_forward(f[2], f[0], f[1], c, a, n);
                 return std::vector<double>{};
             }});
        for (const bool scalar_grads : {false, true}) {
            for (const bool in_place : {false, true}) {
                // f: ds, x, f, dx, df, (dc, da), scalars (c, a)
                cases.push_back(
                    {"ResidualBackward" + label + (scalar_grads ? "WithScaleGrads" : "") +
                         (in_place ? "InPlace" : ""),
                     {rnd(n, 22), rnd(n, 23), rnd(n, 24), rnd(n, 25), zeros(n), Floats{0.25f, -0.5f},
                      Floats{0.8f, -1.3f}},
                     {},
                     [learnable, scalar_grads, in_place, n](Backend& b, float* const* f, int32_t* const*) {
                         const ScaleRef c = learnable ? ScaleRef{0.0f, f[6]} : ScaleRef{1.7f, nullptr};
                         const ScaleRef a = learnable ? ScaleRef{0.0f, f[6] + 1} : ScaleRef{0.4f, nullptr};
                         float* dx = in_place ? f[0] : f[3];  // ds may alias dx
                         b.residual_backward(dx, f[4], scalar_grads ? f[5] : nullptr,
                                             scalar_grads ? f[5] + 1 : nullptr, f[0], f[1], f[2], c, a, n);
                         return std::vector<double>{};
                     }});
            }
        }
    }
}

void add_embeddings_and_linears(std::vector<OpCase>& cases) {
    struct Shape {
        int batch, seq, d, vocab;
    };
    for (const Shape s : {Shape{3, 7, 40, 11}, Shape{16, 64, 96, 65}}) {
        const size_t n = static_cast<size_t>(s.batch) * s.seq;
        const std::string label =
            "_" + std::to_string(s.batch) + "x" + std::to_string(s.seq) + "x" + std::to_string(s.d);
        cases.push_back({"EmbeddingForward" + label,
                         {rnd(static_cast<size_t>(s.vocab) * s.d, 30),
                          rnd(static_cast<size_t>(s.seq) * s.d, 31), zeros(n * s.d)},
                         {token_ids(n, s.vocab, 32, false)},
                         [s](Backend& b, float* const* f, int32_t* const* t) {
                             b.embedding_forward(f[2], t[0], f[0], f[1], s.batch, s.seq, s.d);
                             return std::vector<double>{};
                         }});
        // gradients accumulate into non-zero buffers; tokens repeat
        cases.push_back({"EmbeddingBackward" + label,
                         {rnd(static_cast<size_t>(s.vocab) * s.d, 33),
                          rnd(static_cast<size_t>(s.seq) * s.d, 34), rnd(n * s.d, 35)},
                         {token_ids(n, s.vocab, 36, false)},
                         [s](Backend& b, float* const* f, int32_t* const* t) {
                             b.embedding_backward(f[0], f[1], f[2], t[0], s.batch, s.seq, s.d);
                             return std::vector<double>{};
                         }});
    }
    struct Sizes {
        int n, in, out;
    };
    for (const Sizes z : {Sizes{37, 24, 40}, Sizes{64, 96, 65}, Sizes{130, 200, 33}}) {
        const std::string label =
            "_" + std::to_string(z.n) + "x" + std::to_string(z.in) + "x" + std::to_string(z.out);
        const size_t xs = static_cast<size_t>(z.n) * z.in, ws = static_cast<size_t>(z.out) * z.in,
                     ys = static_cast<size_t>(z.n) * z.out;
        for (const bool bias : {false, true}) {
            cases.push_back({std::string("LinearForward") + (bias ? "WithBias" : "") + label,
                             {rnd(xs, 40), rnd(ws, 41), rnd(z.out, 42), filled(ys, 9.0f)},
                             {},
                             [z, bias](Backend& b, float* const* f, int32_t* const*) {
                                 b.linear_forward(f[3], f[0], f[1], bias ? f[2] : nullptr, z.n, z.in, z.out);
                                 return std::vector<double>{};
                             }});
        }
        // f: dy, x, w, dx, dW, db
        for (const bool accumulate : {false, true}) {
            for (const bool with_dx : {false, true}) {
                for (const bool with_db : {false, true}) {
                    cases.push_back(
                        {std::string("LinearBackward") + (accumulate ? "Accumulate" : "") +
                             (with_dx ? "" : "NoDx") + (with_db ? "" : "NoDb") + label,
                         {rnd(ys, 43), rnd(xs, 44), rnd(ws, 45), rnd(xs, 46), rnd(ws, 47), rnd(z.out, 48)},
                         {},
                         [z, accumulate, with_dx, with_db](Backend& b, float* const* f, int32_t* const*) {
                             b.linear_backward(with_dx ? f[3] : nullptr, f[4], with_db ? f[5] : nullptr, f[0],
                                               f[1], f[2], z.n, z.in, z.out, accumulate);
                             return std::vector<double>{};
                         }});
                }
            }
        }
        // Operands rounded to bf16 / fp16 and the backend told so: the CUDA backend multiplies them on
        // tensor cores, the CPU in fp32, the same exact products summed in another order.
        for (const NumberFormat format : {NumberFormat::Bf16, NumberFormat::Fp16}) {
            const std::string native = std::string(number_format_spec(format).name) + "Operands" + label;
            cases.push_back({"LinearForward" + native,
                             {rounded(rnd(xs, 49), format), rounded(rnd(ws, 50), format), rnd(z.out, 51),
                              filled(ys, 9.0f)},
                             {},
                             [z, format](Backend& b, float* const* f, int32_t* const*) {
                                 b.set_linear_operand_format(format);
                                 b.linear_forward(f[3], f[0], f[1], f[2], z.n, z.in, z.out);
                                 b.set_linear_operand_format(NumberFormat::Fp32);
                                 return std::vector<double>{};
                             }});
            cases.push_back({"LinearBackwardAccumulate" + native,
                             {rounded(rnd(ys, 52), format), rounded(rnd(xs, 53), format),
                              rounded(rnd(ws, 54), format), rnd(xs, 55), rnd(ws, 56), rnd(z.out, 57)},
                             {},
                             [z, format](Backend& b, float* const* f, int32_t* const*) {
                                 b.set_linear_operand_format(format);
                                 b.linear_backward(f[3], f[4], f[5], f[0], f[1], f[2], z.n, z.in, z.out,
                                                   true);
                                 b.set_linear_operand_format(NumberFormat::Fp32);
                                 return std::vector<double>{};
                             }});
        }
    }
}

void add_norms(std::vector<OpCase>& cases) {
    const int n = 70;  // three 32-row chunks, the last one partial
    // QK-norm's LayerNorm: one head's width, no bias (b null), the gain shared by every row
    for (const int d : {8, 32}) {
        const size_t count = static_cast<size_t>(n) * d;
        cases.push_back(
            {"NormForwardLayerNormNoBias_d" + std::to_string(d),
             {rnd(count, 61, 2.0), rnd(d, 62, 0.3, 1.0f), zeros(count), zeros(2 * static_cast<size_t>(n))},
             {},
             [n, d](Backend& b, float* const* f, int32_t* const*) {
                 b.norm_forward(NormType::LayerNorm, f[2], f[3], f[0], f[1], nullptr, {}, n, d, 1e-5f);
                 return std::vector<double>{};
             }});
    }
    for (const int d : {40, 96}) {
        const size_t count = static_cast<size_t>(n) * d;
        for (const NormType type : {NormType::LayerNorm, NormType::RmsNorm, NormType::DyT}) {
            const bool has_bias = type != NormType::RmsNorm;
            for (const bool learnable_alpha : {false, true}) {
                if (type != NormType::DyT && learnable_alpha) continue;
                const std::string label =
                    name_of(type) + (learnable_alpha ? "LearnableAlpha" : "") + "_d" + std::to_string(d);
                const Tensor gain = rnd(d, 50, 0.3, 1.0f);
                // f: x, w, b, y, stats, alpha
                cases.push_back(
                    {"NormForward" + label,
                     {rnd(count, 51, 2.0), gain, rnd(d, 52, 0.3), zeros(count),
                      zeros(2 * static_cast<size_t>(n)), Floats{0.6f}},
                     {},
                     [type, has_bias, learnable_alpha, n, d](Backend& b, float* const* f, int32_t* const*) {
                         const ScaleRef alpha =
                             learnable_alpha ? ScaleRef{0.0f, f[5]} : ScaleRef{0.45f, nullptr};
                         b.norm_forward(type, f[3], f[4], f[0], f[1], has_bias ? f[2] : nullptr, alpha, n, d,
                                        1e-5f);
                         return std::vector<double>{};
                     }});
                for (const bool accumulate : {false, true}) {
                    for (const bool null_grads : {false, true}) {
                        for (const bool in_place : {false, true}) {
                            if (in_place && (accumulate || null_grads)) continue;
                            // f: x, w, b, y, stats, alpha, dy, dx, dw, db, dalpha
                            cases.push_back(
                                {"NormBackward" + label + (accumulate ? "Accumulate" : "") +
                                     (null_grads ? "NoBiasOrAlphaGrad" : "") + (in_place ? "InPlace" : ""),
                                 {rnd(count, 53, 2.0), gain, rnd(d, 54, 0.3), zeros(count),
                                  zeros(2 * static_cast<size_t>(n)), Floats{0.6f}, rnd(count, 55),
                                  rnd(count, 56), rnd(d, 57), rnd(d, 58), Floats{0.1f}},
                                 {},
                                 [=](Backend& b, float* const* f, int32_t* const*) {
                                     const ScaleRef alpha =
                                         learnable_alpha ? ScaleRef{0.0f, f[5]} : ScaleRef{0.45f, nullptr};
                                     b.norm_forward(type, f[3], f[4], f[0], f[1], has_bias ? f[2] : nullptr,
                                                    alpha, n, d, 1e-5f);
                                     float* dx = in_place ? f[6] : f[7];  // dx may alias dy
                                     b.norm_backward(type, dx, f[8], null_grads ? nullptr : f[9],
                                                     null_grads ? nullptr : f[10], f[6], f[0], f[4], f[1],
                                                     alpha, n, d, accumulate);
                                     return std::vector<double>{};
                                 }});
                        }
                    }
                }
            }
        }
    }
}

// Norm-free inference's frozen norms: forward with the fixed scale, backward without a path through it.
void add_frozen_norms(std::vector<OpCase>& cases) {
    const int n = 70, d = 40;
    const size_t count = static_cast<size_t>(n) * d;
    for (const NormType type : {NormType::LayerNorm, NormType::RmsNorm}) {
        const bool has_bias = type == NormType::LayerNorm;
        for (const bool accumulate : {false, true}) {
            // f: x, w, b, y, stats, dy, dx, dw, db
            cases.push_back(
                {"FrozenNorm" + name_of(type) + (accumulate ? "Accumulate" : ""),
                 {rnd(count, 91, 2.0), rnd(d, 92, 0.3, 1.0f), rnd(d, 93, 0.3), zeros(count),
                  zeros(2 * static_cast<size_t>(n)), rnd(count, 94), rnd(count, 95), rnd(d, 96), rnd(d, 97)},
                 {},
                 [=](Backend& b, float* const* f, int32_t* const*) {
                     b.frozen_norm_forward(type, f[3], f[4], f[0], f[1], has_bias ? f[2] : nullptr, 0.7f, n,
                                           d);
                     b.frozen_norm_backward(type, f[6], f[7], has_bias ? f[8] : nullptr, f[5], f[0], f[4],
                                            f[1], n, d, accumulate);
                     return std::vector<double>{};
                 }});
        }
    }
}

// BatchNorm and PowerNorm in each statistics mode: forward (moving the running statistics when updating),
// then backward accumulating onto dx (moving PowerNorm's nu), at sizes past a block's 32 columns and its
// 8 row lanes. State: running mean, running variance, nu (positive draws), then the pass's mean and rstd.
void add_feature_norms(std::vector<OpCase>& cases) {
    struct Sizes {
        int n, d;
    };
    const std::pair<FeatureStatistics, std::string> modes[] = {
        {FeatureStatistics::Running, "Running"},
        {FeatureStatistics::Batch, "Batch"},
        {FeatureStatistics::BatchUpdating, "Updating"}};
    for (const NormType type : {NormType::BatchNorm, NormType::PowerNorm}) {
        for (const auto& [mode, mode_name] : modes) {
            for (const Sizes z : {Sizes{7, 5}, Sizes{300, 70}}) {
                const size_t count = static_cast<size_t>(z.n) * z.d, d = static_cast<size_t>(z.d);
                // f: x, w, b, y, state, dy, dx, dw, db
                cases.push_back(
                    {"FeatureNorm" + name_of(type) + mode_name + "_" + std::to_string(z.n) + "x" +
                         std::to_string(z.d),
                     {rnd(count, 101, 2.0, 0.5f), rnd(d, 102, 0.3, 1.0f), rnd(d, 103, 0.3), zeros(count),
                      rnd(5 * d, 104, 0.5, 0.5f, true), rnd(count, 105), rnd(count, 106), rnd(d, 107),
                      rnd(d, 108)},
                     {},
                     [=, mode = mode](Backend& b, float* const* f, int32_t* const*) {
                         const FeatureNormState state{f[4],         f[4] + d, f[4] + 2 * d, f[4] + 3 * d,
                                                      f[4] + 4 * d, 0.1f,     1e-5f};
                         b.feature_norm_forward(type, f[3], f[0], f[1], f[2], state, mode, z.n, z.d);
                         b.feature_norm_backward(type, f[6], f[7], f[8], f[5], f[0], f[1], state, mode, z.n,
                                                 z.d, true);
                         return std::vector<double>{};
                     }});
            }
        }
    }
}

// More 32-row chunks (65537) than a grid's y dimension takes (65535): the gain, bias and alpha partials
// of a norm's backward over about 2.1M rows (width 1 keeps it to ~50 MB a backend).
void add_norm_with_many_rows(std::vector<OpCase>& cases) {
    const int n = 65537 * 32 - 7;
    const int d = 1;
    const size_t count = static_cast<size_t>(n) * d;
    // f: x, w, b, y, stats, alpha, dy, dx, dw, db, dalpha
    cases.push_back({"NormBackwardDyTMoreChunksThanAGridDimension",
                     {rnd(count, 80, 2.0), rnd(d, 81, 0.3, 1.0f), rnd(d, 82, 0.3), zeros(count),
                      zeros(2 * static_cast<size_t>(n)), Floats{0.6f}, rnd(count, 83), zeros(count),
                      rnd(d, 84), rnd(d, 85), Floats{0.1f}},
                     {},
                     [n, d](Backend& b, float* const* f, int32_t* const*) {
                         const ScaleRef alpha{0.0f, f[5]};
                         b.norm_forward(NormType::DyT, f[3], f[4], f[0], f[1], f[2], alpha, n, d, 1e-5f);
                         b.norm_backward(NormType::DyT, f[7], f[8], f[9], f[10], f[6], f[0], f[4], f[1],
                                         alpha, n, d, false);
                         return std::vector<double>{};
                     }});
}

void add_attention(std::vector<OpCase>& cases) {
    struct Shape {
        int batch, seq, heads, head_dim;
    };
    for (const Shape s : {Shape{2, 7, 3, 5}, Shape{2, 40, 2, 8}, Shape{1, 65, 4, 16}}) {
        const size_t n = static_cast<size_t>(s.batch) * s.seq;
        const size_t d = static_cast<size_t>(s.heads) * s.head_dim;
        const size_t probs = static_cast<size_t>(s.batch) * s.heads * s.seq * s.seq;
        const std::string label = "_b" + std::to_string(s.batch) + "_t" + std::to_string(s.seq) + "_h" +
                                  std::to_string(s.heads) + "_hd" + std::to_string(s.head_dim);
        for (const bool with_stats : {false, true}) {
            // f: qkv, out, probs, entropy sum, each head's max logit (tensors of their own: each is
            // compared at its own scale, the max logits not against the larger entropy sum)
            cases.push_back({std::string("AttentionForward") + (with_stats ? "WithStats" : "") + label,
                             {rnd(n * 3 * d, 60, 1.5), zeros(n * d), filled(probs, 7.0f), Floats{-1.0f},
                              filled(static_cast<size_t>(s.heads), -1.0f)},
                             {},
                             [s, with_stats](Backend& b, float* const* f, int32_t* const*) {
                                 AttentionStatsRef stats;
                                 if (with_stats) stats = {f[3], f[4]};
                                 b.attention_forward(f[1], f[2], f[0], s.batch, s.seq, s.heads, s.head_dim,
                                                     stats);
                                 return std::vector<double>{};
                             }});
        }
        // Cross-attention (q and kv from separate buffers) over a memory of 3 valid keys, bidirectional
        // self-attention over 3 keys, and causal within 3 keys. f: q, kv, out, probs, dout, dq, dkv
        // (random: they must be overwritten), entropy sum, each head's max logit.
        for (const auto& [mask_name, causal] :
             {std::pair{"Bidirectional", false}, std::pair{"Causal", true}}) {
            const bool is_causal = causal;
            cases.push_back({std::string("CrossAttention") + mask_name + "Keys3" + label,
                             {rnd(n * d, 64, 1.5), rnd(n * 2 * d, 65, 1.5), zeros(n * d), filled(probs, 7.0f),
                              rnd(n * d, 66), rnd(n * d, 67), rnd(n * 2 * d, 68), Floats{-1.0f},
                              filled(static_cast<size_t>(s.heads), -1.0f)},
                             {},
                             [s, d, is_causal](Backend& b, float* const* f, int32_t* const*) {
                                 const int width = static_cast<int>(d);
                                 const AttentionShape shape{s.batch,    s.seq,     s.heads,
                                                            s.head_dim, is_causal, 3};
                                 const AttentionInputs in{f[0], f[1], f[1] + width, width, 2 * width};
                                 b.attention_forward(f[2], f[3], in, shape, {f[7], f[8]});
                                 b.attention_backward({f[5], f[6], f[6] + width, width, 2 * width}, f[4], in,
                                                      f[3], shape);
                                 return std::vector<double>{};
                             }});
        }
        // f: qkv, out, probs, dout, dqkv (random: it must be overwritten)
        cases.push_back(
            {"AttentionBackward" + label,
             {rnd(n * 3 * d, 61, 1.5), zeros(n * d), zeros(probs), rnd(n * d, 62), rnd(n * 3 * d, 63)},
             {},
             [s](Backend& b, float* const* f, int32_t* const*) {
                 b.attention_forward(f[1], f[2], f[0], s.batch, s.seq, s.heads, s.head_dim, {});
                 b.attention_backward(f[4], f[3], f[0], f[2], s.batch, s.seq, s.heads, s.head_dim);
                 return std::vector<double>{};
             }});
    }
}

void add_losses_reductions_and_optimizers(std::vector<OpCase>& cases) {
    const int n = 50;
    for (const int vocab : {7, 65, 300}) {
        const size_t count = static_cast<size_t>(n) * vocab;
        for (const int mode : {0, 1, 2}) {  // separate gradient, gradient in place of the logits, no gradient
            const char* labels[] = {"", "InPlace", "NoGradient"};
            // f: logits, dlogits
            cases.push_back({std::string("CrossEntropy") + labels[mode] + "_vocab" + std::to_string(vocab),
                             {rnd(count, 70, 3.0), filled(count, 5.0f)},
                             {token_ids(n, vocab, 71, true)},
                             [n, vocab, mode](Backend& b, float* const* f, int32_t* const* t) {
                                 // with z-loss: its term in the gradient and the output-logit sums
                                 const auto result = b.cross_entropy(mode == 1 ? f[0] : f[1], f[0], t[0], n,
                                                                     vocab, mode != 2, 0.01f);
                                 return std::vector<double>{result.loss_sum,
                                                            static_cast<double>(result.scored),
                                                            static_cast<double>(result.correct),
                                                            result.z_loss_sum,
                                                            result.log_z_sum,
                                                            result.log_z_max_abs,
                                                            result.logit_sum,
                                                            result.logit_max};
                             }});
        }
    }
    // Ties: row r's logits are ((j + r) % 5) / 4, so the maximum recurs every 5 columns, in other lanes
    // of the warp (first at f, then f + 5, ..., f + 30 in lane f - 2). The argmax is the first index, f,
    // as on the CPU: targets f, f + 30, f + 5 and unscored in turn, so exactly the rows aimed at f count.
    for (const bool in_place : {false, true}) {
        const int rows = 40, width = 100;
        Floats tied(static_cast<size_t>(rows) * width);
        Ints tie_targets(rows);
        for (int r = 0; r < rows; ++r) {
            for (int j = 0; j < width; ++j) tied[static_cast<size_t>(r) * width + j] = ((j + r) % 5) * 0.25f;
            const int first = ((4 - r) % 5 + 5) % 5;
            const int choice[] = {first, first + 30, first + 5, -1};
            tie_targets[r] = choice[r % 4];
        }
        cases.push_back({std::string("CrossEntropyTiedArgmax") + (in_place ? "InPlace" : ""),
                         {Tensor(tied), filled(tied.size(), 5.0f)},
                         {tie_targets},
                         [rows, width, in_place](Backend& b, float* const* f, int32_t* const* t) {
                             const auto result =
                                 b.cross_entropy(in_place ? f[0] : f[1], f[0], t[0], rows, width, true, 0.0f);
                             EXPECT_EQ(result.correct, rows / 4) << "the first index of the maximum wins";
                             return std::vector<double>{result.loss_sum, static_cast<double>(result.scored),
                                                        static_cast<double>(result.correct)};
                         }});
    }
    cases.push_back({"CrossEntropyNothingScored",
                     {rnd(10 * 65, 72), zeros(10 * 65)},
                     {Ints(10, -1)},
                     [](Backend& b, float* const* f, int32_t* const* t) {
                         const auto result = b.cross_entropy(f[1], f[0], t[0], 10, 65, true, 0.0f);
                         return std::vector<double>{result.loss_sum, static_cast<double>(result.scored),
                                                    static_cast<double>(result.correct)};
                     }});
    const std::vector<Slice> slices = {{0, 10}, {10, 0}, {17, 40000}, {5000, 60000}, {99999, 1}, {0, 100000}};
    cases.push_back({"SumSquaresAndValuesOverSlices",
                     {rnd(100000, 73, 2.0)},
                     {},
                     [slices](Backend& b, float* const* f, int32_t* const*) {
                         std::vector<double> squares(slices.size()), sums(slices.size());
                         b.sum_squares(f[0], slices, squares.data());
                         b.sum_values(f[0], slices, sums.data());
                         squares.insert(squares.end(), sums.begin(), sums.end());
                         return squares;
                     }});
    cases.push_back({"CountBelowOverSlices",
                     {rnd(100000, 75, 2.0)},
                     {},
                     [slices](Backend& b, float* const* f, int32_t* const*) {
                         std::vector<double> all;
                         for (const float threshold : {-3.0f, -0.1f, 0.0f, 0.7f, 5.0f}) {
                             std::vector<double> below(slices.size());
                             b.count_below(f[0], slices, threshold, below.data());
                             all.insert(all.end(), below.begin(), below.end());
                         }
                         return all;
                     }});
    const size_t count = 5000;
    const Tensor second_moment = rnd(count, 74, 1e-3, 0.0f, true);
    for (const OptimizerKind kind :
         {OptimizerKind::Sgd, OptimizerKind::Adam, OptimizerKind::AdamW, OptimizerKind::RAdam}) {
        for (const float rect : {0.0f, 0.8f}) {
            if (kind != OptimizerKind::RAdam && rect > 0.0f) continue;
            OptimizerStep step;
            step.kind = kind;
            step.lr = 1e-2f;
            step.grad_scale = 0.7f;
            step.weight_decay = 0.1f;
            step.bias_correction1 = 1.0f - 0.729f;  // 1 - 0.9^3
            step.bias_correction2 = 1.0f - 0.997003f;
            step.radam_rect = rect;
            // f: param, grad, m, v, update
            cases.push_back(
                {"Optimizer" + name_of(kind) + (rect > 0.0f ? "Rectified" : ""),
                 {rnd(count, 75), rnd(count, 76), rnd(count, 77, 0.01), second_moment, zeros(count)},
                 {},
                 [step, count](Backend& b, float* const* f, int32_t* const*) {
                     b.optimizer_update(step, f[0], f[1], f[2], f[3], f[4], count);
                     return std::vector<double>{};
                 }});
        }
    }
}

// The ops of current LLM blocks: the gated FFN's product (dup aliasing dh, as the model calls it), RoPE
// both ways on strided rows (packed q | k | v), grouped-query attention's repeated heads and their group
// sums, and embeddings without position rows.
void add_gated_rope_and_position_free(std::vector<OpCase>& cases) {
    const size_t n = 70001;
    for (const FeedForward kind : {FeedForward::SwiGlu, FeedForward::GeGlu}) {
        const std::string label = kind == FeedForward::SwiGlu ? "SwiGlu" : "GeGlu";
        // f: gate, up, h, dh (becomes dup: it aliases dh, as the model calls it), dgate
        cases.push_back({"GatedForwardAndBackward" + label,
                         {rnd(n, 80, 2.0), rnd(n, 81), zeros(n), rnd(n, 82), zeros(n)},
                         {},
                         [kind, n](Backend& b, float* const* f, int32_t* const*) {
                             b.gated_forward(kind, f[2], f[0], f[1], n);
                             b.gated_backward(kind, f[4], f[3], f[3], f[0], f[1], n);
                             return std::vector<double>{};
                         }});
    }
    const int rows = 4 * 33, seq = 33, heads = 6, head_dim = 16, stride = 3 * heads * head_dim;
    for (const bool inverse : {false, true}) {
        const size_t count = static_cast<size_t>(rows) * stride;
        cases.push_back({inverse ? "RopeInverse" : "Rope",
                         {rnd(count, 85)},
                         {},
                         [inverse](Backend& b, float* const* f, int32_t* const*) {
                             b.rope(f[0], stride, rows, seq, heads, head_dim, 10000.0f, inverse);
                             b.rope(f[0] + heads * head_dim, stride, rows, seq, heads, head_dim, 10000.0f,
                                    inverse);
                             return std::vector<double>{};
                         }});
    }
    // f: packed k rows (stride 3 x 64 + 5), repeated [rows, 6 heads x 16], the group sums written back
    const int kv_rows = 77, kv_stride = 197;
    cases.push_back(
        {"RepeatedHeadsAndGroupSums",
         {rnd(static_cast<size_t>(kv_rows) * kv_stride, 90), zeros(static_cast<size_t>(kv_rows) * 96),
          rnd(static_cast<size_t>(kv_rows) * 96, 91), rnd(static_cast<size_t>(kv_rows) * kv_stride, 92)},
         {},
         [](Backend& b, float* const* f, int32_t* const*) {
             b.repeat_heads(f[1], f[0] + 64, kv_stride, {kv_rows, 2, 3, 16});
             b.sum_head_groups(f[3] + 64, kv_stride, f[2], {kv_rows, 2, 3, 16});
             return std::vector<double>{};
         }});
    const int batch = 5, positions = 9, d = 40, vocab = 13;
    const size_t tokens = static_cast<size_t>(batch) * positions;
    cases.push_back({"EmbeddingWithoutPositions",
                     {rnd(static_cast<size_t>(vocab) * d, 86), zeros(tokens * d),
                      rnd(static_cast<size_t>(vocab) * d, 87), rnd(tokens * d, 88)},
                     {token_ids(tokens, vocab, 89, false)},
                     [](Backend& b, float* const* f, int32_t* const* t) {
                         b.embedding_forward(f[1], t[0], f[0], nullptr, batch, positions, d);
                         b.embedding_backward(f[2], nullptr, f[3], t[0], batch, positions, d);
                         return std::vector<double>{};
                     }});
}

// Attention over depth: softmax over sources (also in place, also one source), the weighted sum, and their
// gradients (dv accumulating onto what it held), at sizes with rows and widths past a warp and a block.
void add_depth_attention(std::vector<OpCase>& cases) {
    struct Sizes {
        int sources, n, d;
    };
    for (const Sizes z : {Sizes{1, 7, 5}, Sizes{3, 37, 24}, Sizes{9, 300, 70}}) {
        const std::string label =
            "_" + std::to_string(z.sources) + "x" + std::to_string(z.n) + "x" + std::to_string(z.d);
        const size_t scores = static_cast<size_t>(z.sources) * z.n, values = scores * z.d,
                     rows = static_cast<size_t>(z.n) * z.d;
        // f: p, logits (scaled up so some rows are peaked)
        cases.push_back({"DepthSoftmaxForward" + label,
                         {filled(scores, 9.0f), rnd(scores, 70, 3.0)},
                         {},
                         [z](Backend& b, float* const* f, int32_t* const*) {
                             b.depth_softmax_forward(f[0], f[1], z.sources, z.n);
                             return std::vector<double>{};
                         }});
        cases.push_back({"DepthSoftmaxForwardInPlace" + label,
                         {rnd(scores, 71, 3.0)},
                         {},
                         [z](Backend& b, float* const* f, int32_t* const*) {
                             b.depth_softmax_forward(f[0], f[0], z.sources, z.n);
                             return std::vector<double>{};
                         }});
        // f: dlogits (in place over dp), p (a softmax's, made by the op itself first), logits
        cases.push_back({"DepthSoftmaxBackward" + label,
                         {rnd(scores, 72), filled(scores, 0.0f), rnd(scores, 73)},
                         {},
                         [z](Backend& b, float* const* f, int32_t* const*) {
                             b.depth_softmax_forward(f[1], f[2], z.sources, z.n);
                             b.depth_softmax_backward(f[0], f[0], f[1], z.sources, z.n);
                             return std::vector<double>{};
                         }});
        // f: h, p, v
        cases.push_back({"DepthMixForward" + label,
                         {filled(rows, 9.0f), rnd(scores, 74, 1.0, 0.0f, true), rnd(values, 75)},
                         {},
                         [z](Backend& b, float* const* f, int32_t* const*) {
                             b.depth_mix_forward(f[0], f[1], f[2], z.sources, z.n, z.d);
                             return std::vector<double>{};
                         }});
        // f: dv (accumulated onto), dp, dh, p, v
        cases.push_back({"DepthMixBackward" + label,
                         {rnd(values, 76), filled(scores, 9.0f), rnd(rows, 77),
                          rnd(scores, 78, 1.0, 0.0f, true), rnd(values, 79)},
                         {},
                         [z](Backend& b, float* const* f, int32_t* const*) {
                             b.depth_mix_backward(f[0], f[1], f[2], f[3], f[4], z.sources, z.n, z.d);
                             return std::vector<double>{};
                         }});
    }
}

std::vector<OpCase> all_op_cases() {
    std::vector<OpCase> cases;
    add_memory_and_elementwise(cases);
    add_residuals(cases);
    add_embeddings_and_linears(cases);
    add_norms(cases);
    add_frozen_norms(cases);
    add_feature_norms(cases);
    add_norm_with_many_rows(cases);
    add_attention(cases);
    add_losses_reductions_and_optimizers(cases);
    add_gated_rope_and_position_free(cases);
    add_depth_attention(cases);
    return cases;
}

INSTANTIATE_TEST_SUITE_P(AllOps, CudaOpParity, ::testing::ValuesIn(all_op_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

// The native products are really narrow: operands the model did not round (breaking
// set_linear_operand_format's promise) come out as cuBLAS's lower-precision reading of them (bf16, fp16
// or TF32: the H200 ran TF32 kernels), well off the fp32 product, while rounded operands agree with it to
// fp32 summation order. Sizes large enough that cuBLAS picks its tensor-core kernels.
class CudaNativeProducts : public testing::CudaTestWithParam<NumberFormat> {};

}  // namespace

void PrintTo(NumberFormat format, std::ostream* out) {
    *out << number_format_spec(format).name;
}

namespace {

TEST_P(CudaNativeProducts, ReadTheOperandsInTheFormat) {
    const char* fp32_products = std::getenv("NORMLAB_CUDA_FP32_PRODUCTS");
    if (fp32_products && std::string(fp32_products) == "1") GTEST_SKIP() << "NORMLAB_CUDA_FP32_PRODUCTS=1";
    const NumberFormat format = GetParam();
    const int n = 256, in = 512, out = 384;
    const auto product = [&](const Floats& x, const Floats& w, NumberFormat told) {
        float* device_x = cuda().allocate(x.size());
        float* device_w = cuda().allocate(w.size());
        float* device_y = cuda().allocate(static_cast<size_t>(n) * out);
        cuda().upload(device_x, x.data(), x.size());
        cuda().upload(device_w, w.data(), w.size());
        cuda().set_linear_operand_format(told);
        cuda().linear_forward(device_y, device_x, device_w, nullptr, n, in, out);
        cuda().set_linear_operand_format(NumberFormat::Fp32);
        Floats y(static_cast<size_t>(n) * out);
        cuda().download(y.data(), device_y, y.size());
        for (float* pointer : {device_x, device_w, device_y}) cuda().release(pointer);
        return y;
    };
    const Floats x = testing::random_tensor(static_cast<size_t>(n) * in, 61);
    const Floats w = testing::random_tensor(static_cast<size_t>(out) * in, 62);
    const ParityCheck unrounded =
        compare_tensors("unrounded", product(x, w, format), product(x, w, NumberFormat::Fp32), 1e-4);
    EXPECT_FALSE(unrounded.passed()) << "cuBLAS multiplied in fp32: " << unrounded.describe();
    Floats x_rounded = x, w_rounded = w;
    round_to_format(x_rounded.data(), x_rounded.size(), format);
    round_to_format(w_rounded.data(), w_rounded.size(), format);
    testing::expect_close("rounded", product(x_rounded, w_rounded, format),
                          product(x_rounded, w_rounded, NumberFormat::Fp32), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Formats, CudaNativeProducts,
                         ::testing::Values(NumberFormat::Bf16, NumberFormat::Fp16),
                         [](const ::testing::TestParamInfo<NumberFormat>& info) {
                             return std::string(number_format_spec(info.param).name);
                         });

// Allocations are tracked: releasing is idempotent for pointers the backend did not hand out (the
// model releases null buffers), and memory handed out is zeroed like the CPU's.
class CudaMemory : public testing::CudaTest {};

TEST_F(CudaMemory, AllocationsStartZeroedAndReleaseIgnoresForeignPointers) {
    float* buffer = cuda().allocate(1000);
    Floats host(1000, 1.0f);
    cuda().download(host.data(), buffer, host.size());
    for (float value : host) ASSERT_EQ(value, 0.0f);
    cuda().release(buffer);
    cuda().release(nullptr);
    cuda().release(host.data());
}

TEST_F(CudaMemory, AnImpossibleAllocationIsAResourceErrorNamingTheSize) {
    try {
        cuda().allocate(size_t{1} << 45);  // 128 TiB of floats
        FAIL() << "the allocation should fail";
    } catch (const ResourceError& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("out of GPU memory"), std::string::npos) << message;
        EXPECT_NE(message.find("MiB"), std::string::npos) << message;
        EXPECT_NE(message.find("train.batch_size"), std::string::npos) << message;
    }
    float* still_works = cuda().allocate(10);  // the failed request left no sticky error
    cuda().release(still_works);
}

// bench's host_bytes_per_step and peak_device_mb: every device-to-host copy is counted, and the peak
// holds the most memory held at once, across a release.
TEST_F(CudaMemory, TrafficCountsCopiesToTheHostAndThePeakHeld) {
    const DeviceTraffic before = cuda().device_traffic();
    float* big = cuda().allocate(1 << 20);
    float* small = cuda().allocate(1000);
    Floats host(1000);
    cuda().download(host.data(), small, host.size());
    const std::vector<Slice> slices = {{0, 500}, {500, 500}};
    double sums[2];
    cuda().sum_squares(small, slices, sums);
    const DeviceTraffic after = cuda().device_traffic();
    EXPECT_EQ(after.bytes_to_host - before.bytes_to_host, 1000 * sizeof(float) + 2 * sizeof(double));
    EXPECT_GE(after.peak_device_bytes, before.peak_device_bytes);
    EXPECT_GE(after.peak_device_bytes, ((1u << 20) + 1000) * sizeof(float));
    cuda().release(big);
    cuda().release(small);
    EXPECT_EQ(cuda().device_traffic().peak_device_bytes, after.peak_device_bytes);  // a peak never falls
}

}  // namespace
}  // namespace normlab
