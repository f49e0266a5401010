// The narrow interface every compute backend implements: the CPU reference and fast backends
// (engine/backend/cpu/) and the CUDA backend (engine/backend/cuda/, docs/cuda.md).
// All float*/int32_t* arguments live in the backend's memory; matrices are row-major; weights follow
// PyTorch nn.Linear layout W[out, in]. Backward ops accumulate (+=) into parameter gradients.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/config/config.h"
#include "engine/core/format_rounding.h"
#include "engine/core/host_device.h"
#include "engine/core/number_formats.h"

namespace normlab {

// A scale that is either a constant or a learnable scalar living in backend memory.
struct ScaleRef {
    float constant = 1.0f;
    const float* param = nullptr;  // when set, the value is *param
};
// Whether a scale is the constant 1 (multiplying by it changes nothing, and it learns nothing).
inline bool is_one(ScaleRef scale) {
    return !scale.param && scale.constant == 1.0f;
}

// A contiguous range of a buffer, for reductions over named parameter views or activations.
struct Slice {
    size_t offset = 0;
    size_t count = 0;
};

// What one optimizer update needs besides the tensors; scalars are computed on the host per step.
struct OptimizerStep {
    OptimizerKind kind = OptimizerKind::Adam;
    float lr = 0.0f;
    float grad_scale = 1.0f;  // clipping factor applied to the gradient
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-8f;
    float weight_decay = 0.0f;      // 0 for tensors that are not decayed
    float bias_correction1 = 1.0f;  // 1 - beta1^t
    float bias_correction2 = 1.0f;  // 1 - beta2^t
    float radam_rect = 0.0f;        // RAdam: r_t when the variance is tractable, else 0 (momentum step)
    float momentum = 0.9f;          // SGD
};

// Attention telemetry of one layer, summed by the op: entropy sum over (batch, head, query) rows and
// each head's largest scaled logit (over the batch and its queries).
// Feature norms (BatchNorm, PowerNorm; is_feature_norm): which statistics a pass normalises with.
// Running: evaluation, the running statistics alone, nothing moves. Batch: training's (BatchNorm: the
// batch's mean and variance per feature, with their gradient; PowerNorm: the running quadratic mean of
// the steps before and the approximate backward with nu). BatchUpdating: Batch, and the pass also moves
// the running statistics (forward) and PowerNorm's nu (backward) by the momentum: a training step.
enum class FeatureStatistics { Running, Batch, BatchUpdating };

// One feature norm's state, [d] floats each (backend memory). running_var is BatchNorm's running
// (unbiased) variance or PowerNorm's running quadratic mean psi^2; running_mean stays 0 under PowerNorm.
// mean and rstd: what the last forward pass normalised with (its backward reads them).
struct FeatureNormState {
    float* running_mean = nullptr;
    float* running_var = nullptr;
    float* nu = nullptr;  // PowerNorm's backward memory (Shen et al. 2020, Algorithm 1)
    float* mean = nullptr;
    float* rstd = nullptr;
    float momentum = 0.1f;
    float eps = 1e-5f;
};

struct AttentionStatsRef {
    float* entropy_sum = nullptr;  // 1 float
    float* max_logit = nullptr;    // `heads` floats, head by head
};

// The shape of one attention call and its mask: query t attends key j when j < key_limit(t).
struct AttentionShape {
    int batch = 0, seq = 0, heads = 0, head_dim = 0;
    bool causal = true;        // j <= t
    int keys = 0;              // only keys j < keys (0: all seq positions)
    float logit_scale = 0.0f;  // the factor on q k^T (0: 1 / sqrt(head_dim); muP's differs)
    NORMLAB_HOST_DEVICE float scale() const {
        return logit_scale > 0.0f ? logit_scale : 1.0f / sqrtf(static_cast<float>(head_dim));
    }
    NORMLAB_HOST_DEVICE int key_limit(int t) const {
        const int valid = keys > 0 && keys < seq ? keys : seq;
        return causal && t + 1 < valid ? t + 1 : valid;
    }
};

// Where attention reads q, k and v: rows of d floats, heads contiguous, each source with a row stride.
struct AttentionInputs {
    const float* q = nullptr;
    const float* k = nullptr;
    const float* v = nullptr;
    int q_stride = 0;   // floats between two rows of q
    int kv_stride = 0;  // the same for k and v
};

// Where attention backward writes dq, dk, dv (same conventions as AttentionInputs).
struct AttentionGrads {
    float* q = nullptr;
    float* k = nullptr;
    float* v = nullptr;
    int q_stride = 0;
    int kv_stride = 0;
};

// Grouped-query attention's heads: `rows` rows of kv_heads key/value heads of head_dim floats, each
// shared by `group` query heads.
struct HeadGroups {
    int rows = 0;
    int kv_heads = 0;
    int group = 1;
    int head_dim = 0;
};

// Self-attention's sources inside packed qkv[n, 3d].
inline AttentionInputs packed_qkv(const float* qkv, int d) {
    return {qkv, qkv + d, qkv + 2 * d, 3 * d, 3 * d};
}

// What a device backend has moved and held, for benchmarks (normlab-cli bench): bytes copied to the host
// since it was made, and the most device memory it held at once. Zero on the CPU, whose memory is the host's.
struct DeviceTraffic {
    uint64_t bytes_to_host = 0;
    uint64_t peak_device_bytes = 0;
};

class Backend {
  public:
    virtual ~Backend() = default;
    virtual DeviceTraffic device_traffic() const { return {}; }
    virtual std::string name() const = 0;    // e.g. "cpu (task pool + LIBXSMM GEMM, 2 threads)"
    virtual std::string device() const = 0;  // "cpu" or "cuda"
    virtual int threads() const = 0;

    // Memory. Allocation failures throw ResourceError naming the size asked for.
    virtual float* allocate(size_t count) = 0;
    virtual int32_t* allocate_ints(size_t count) = 0;
    virtual void release(void* pointer) = 0;
    virtual void upload(float* dst, const float* host_src, size_t count) = 0;
    virtual void upload_ints(int32_t* dst, const int32_t* host_src, size_t count) = 0;
    virtual void download(float* host_dst, const float* src, size_t count) = 0;
    virtual void fill(float* dst, float value, size_t count) = 0;
    virtual void copy(float* dst, const float* src, size_t count) = 0;

    // x[n, d] = wte[tokens] + wpe[position]; tokens is [batch, seq], n = batch * seq. A null wpe (dwpe)
    // leaves the positions out (model.position rope or none).
    virtual void embedding_forward(float* x, const int32_t* tokens, const float* wte, const float* wpe,
                                   int batch, int seq, int d) = 0;
    virtual void embedding_backward(float* dwte, float* dwpe, const float* dx, const int32_t* tokens,
                                    int batch, int seq, int d) = 0;

    // y[n, out] = x[n, in] W[out, in]^T + b (b may be null).
    virtual void linear_forward(float* y, const float* x, const float* w, const float* b, int n, int in,
                                int out) = 0;
    // dx = dy W (overwritten, or added when accumulate_dx; skipped when dx is null); dW += dy^T x;
    // db += column sums of dy (skipped when db is null).
    virtual void linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x,
                                 const float* w, int n, int in, int out, bool accumulate_dx) = 0;
    // The format that every operand of the linear_forward / linear_backward calls that follow holds
    // exactly (MatmulPrecision rounds them first; Fp32, the default, promises nothing). A backend with
    // matrix units for it may multiply in it natively, accumulating in fp32 as before: the same products
    // summed in another order (the CUDA backend's tensor cores for bf16 and fp16, which read such values
    // exactly at 16 bits or TF32; the CPU stays in fp32).
    virtual void set_linear_operand_format(NumberFormat format) { (void)format; }

    // Row-wise norm of x[n, d]. stats holds what backward needs (2n floats: mean, rstd).
    // LayerNorm uses w and b; RMSNorm w only; DyT w, b and the scalar alpha.
    virtual void norm_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                              const float* b, ScaleRef alpha, int n, int d, float eps) = 0;
    virtual void norm_backward(NormType type, float* dx, float* dw, float* db, float* dalpha, const float* dy,
                               const float* x, const float* stats, const float* w, ScaleRef alpha, int n,
                               int d, bool accumulate_dx) = 0;
    // LayerNorm / RMSNorm with a frozen scale (norm-free inference, docs/science.md): each row centred
    // (LayerNorm) and multiplied by the fixed `rstd` instead of its own 1/std; stats as norm_forward's,
    // with `rstd` on every row. The backward has no path through the scale: dx = rstd (dxhat - mean dxhat)
    // (LayerNorm) or rstd dxhat (RMSNorm); the gain and bias gradients are norm_backward's.
    virtual void frozen_norm_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                                     const float* b, float rstd, int n, int d) = 0;
    virtual void frozen_norm_backward(NormType type, float* dx, float* dw, float* db, const float* dy,
                                      const float* x, const float* stats, const float* w, int n, int d,
                                      bool accumulate_dx) = 0;
    // frozen_norm_*'s precondition: LayerNorm or RMSNorm (DyT has no per-token scale), a finite rstd > 0.
    static void check_frozen_norm(NormType type, float rstd) {
        if (type == NormType::DyT || !(rstd > 0.0f) || !std::isfinite(rstd))
            throw std::invalid_argument("frozen norms are LayerNorm or RMSNorm with a finite scale > 0");
    }

    // Feature norms (FeatureNormState, FeatureStatistics; docs/model.md#batchnorm-and-powernorm) over the
    // n rows of x[n, d]: y = w (x - mean) rstd + b per feature. Backward writes (adds, accumulate_dx) dx
    // = rstd (g - a - xhat c) with g = w dy and per feature a = mean g, c = mean g xhat (BatchNorm on
    // batch statistics), a = 0, c = nu (PowerNorm's approximate backward), or a = c = 0 (running
    // statistics); dw += sum dy xhat, db += sum dy (db may be null).
    virtual void feature_norm_forward(NormType type, float* y, const float* x, const float* w, const float* b,
                                      const FeatureNormState& state, FeatureStatistics mode, int n,
                                      int d) = 0;
    virtual void feature_norm_backward(NormType type, float* dx, float* dw, float* db, const float* dy,
                                       const float* x, const float* w, const FeatureNormState& state,
                                       FeatureStatistics mode, int n, int d, bool accumulate_dx) = 0;

    // Multi-head attention: out[n, d] = softmax(q k^T / sqrt(hd)) v per head, each query t attending keys
    // j < shape.key_limit(t) (causal: j <= t; and only the first shape.keys positions, the valid part of
    // an encoder's memory). q, k, v rows come from separate strided sources (self-attention: all three
    // inside packed qkv[n, 3d]; cross-attention: q[n, d] and kv[n, 2d]). probs[batch, heads, seq, seq]
    // is kept for backward (zero where masked). stats (optional) receives the entropy sum and largest logit.
    virtual void attention_forward(float* out, float* probs, const AttentionInputs& in,
                                   const AttentionShape& shape, AttentionStatsRef stats) = 0;
    // Overwrites dq, dk and dv (through grads' strides) from dout and the forward's probs.
    virtual void attention_backward(const AttentionGrads& grads, const float* dout, const AttentionInputs& in,
                                    const float* probs, const AttentionShape& shape) = 0;

    // Causal self-attention on packed qkv[n, 3d] (q | k | v, heads contiguous inside each).
    void attention_forward(float* out, float* probs, const float* qkv, int batch, int seq, int heads,
                           int head_dim, AttentionStatsRef stats) {
        attention_forward(out, probs, packed_qkv(qkv, heads * head_dim), {batch, seq, heads, head_dim},
                          stats);
    }
    void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* probs, int batch,
                            int seq, int heads, int head_dim) {
        const int d = heads * head_dim;
        attention_backward({dqkv, dqkv + d, dqkv + 2 * d, 3 * d, 3 * d}, dout, packed_qkv(qkv, d), probs,
                           {batch, seq, heads, head_dim});
    }

    virtual void activation_forward(Activation kind, float* y, const float* x, size_t count) = 0;
    virtual void activation_backward(Activation kind, float* dx, const float* dy, const float* x,
                                     size_t count) = 0;

    // The gated FFN's product h = act(gate) * up, act SiLU (SwiGLU) or GELU (GeGLU); kind is never Mlp.
    virtual void gated_forward(FeedForward kind, float* h, const float* gate, const float* up,
                               size_t count) = 0;
    // dgate = dh up act'(gate), dup = dh act(gate) (both overwritten; dup may alias dh).
    virtual void gated_backward(FeedForward kind, float* dgate, float* dup, const float* dh,
                                const float* gate, const float* up, size_t count) = 0;

    // RoPE in place on rows * heads head vectors of head_dim floats (rows `stride` floats apart, heads
    // contiguous, row r at position r % seq): dimensions i and i + head_dim / 2 turn by the angle
    // position x theta^(-2i / head_dim) (Hugging Face Llama's rotate_half). inverse turns them back, which
    // is also the backward pass (the transpose of a rotation is its inverse).
    virtual void rope(float* x, int stride, int rows, int seq, int heads, int head_dim, float theta,
                      bool inverse) = 0;

    // Grouped-query attention (Hugging Face's repeat_kv): dst [rows, kv_heads x group x head_dim] holds
    // each of src's kv_heads heads (rows `stride` floats apart) group times in a row, so query head h
    // reads key/value head h / group.
    virtual void repeat_heads(float* dst, const float* src, int stride, HeadGroups heads) = 0;
    // Its backward: dst (rows `stride` floats apart, kv_heads heads; overwritten) = for each key/value
    // head the sum, in head order, of its group's heads in src [rows, kv_heads x group x head_dim].
    virtual void sum_head_groups(float* dst, int stride, const float* src, HeadGroups heads) = 0;

    // Attention over depth (model.residual=attn_res): `sources` tensors of n rows, source-major and
    // contiguous (scores [sources][n], values [sources][n][d]); row r of each source belongs to token r.
    // p[s][r] = the softmax over s of logits[s][r] (p may be logits).
    virtual void depth_softmax_forward(float* p, const float* logits, int sources, int n) = 0;
    // dlogits[s][r] = p[s][r] (dp[s][r] - sum_t p[t][r] dp[t][r]) (dlogits may be dp).
    virtual void depth_softmax_backward(float* dlogits, const float* dp, const float* p, int sources,
                                        int n) = 0;
    // h[r] = sum over s, in order, of p[s][r] v[s][r] (h [n][d], overwritten).
    virtual void depth_mix_forward(float* h, const float* p, const float* v, int sources, int n, int d) = 0;
    // dv[s][r] += p[s][r] dh[r]; dp[s][r] = <dh[r], v[s][r]> (overwritten).
    virtual void depth_mix_backward(float* dv, float* dp, const float* dh, const float* p, const float* v,
                                    int sources, int n, int d) = 0;

    // s = c x + a f (the residual sum of one sub-layer).
    virtual void residual_forward(float* s, const float* x, const float* f, ScaleRef c, ScaleRef a,
                                  size_t count) = 0;
    // The same, and the sums of values and of squares of s and of f (host doubles, as
    // sum_values_and_squares gives them). A backend that takes them in the same pass says so with
    // fuses_residual_sums(), and the model then asks each sub-layer for them instead of reducing all
    // residual sums and branches afterwards; the default is the two steps, one after the other.
    struct ResidualSums {
        double* values;
        double* squares;
        double* branch_values;
        double* branch_squares;
    };
    virtual bool fuses_residual_sums() const { return false; }
    virtual void residual_forward_with_sums(float* s, const float* x, const float* f, ScaleRef c, ScaleRef a,
                                            size_t count, ResidualSums sums) {
        residual_forward(s, x, f, c, a, count);
        const std::vector<Slice> whole{{0, count}};
        sum_values_and_squares(s, whole, sums.values, sums.squares);
        sum_values_and_squares(f, whole, sums.branch_values, sums.branch_squares);
    }
    // dx = c ds (overwritten), df = a ds (overwritten), dc += <ds, x>, da += <ds, f> (when not null).
    // ds may alias dx.
    virtual void residual_backward(float* dx, float* df, float* dc, float* da, const float* ds,
                                   const float* x, const float* f, ScaleRef c, ScaleRef a, size_t count) = 0;

    // Softmax cross-entropy of logits[n, vocab] against targets (-1 = not scored), plus z-loss: z_loss x
    // (log Z)^2 per scored row, Z = sum of exp(logits) (PaLM; Wortsman et al. 2023). Writes the gradient
    // of their mean over scored rows, dlogits = (softmax (1 + 2 z_loss log Z) - onehot) / scored (0 on
    // unscored rows; may alias logits), and returns, on the host, sums over the scored rows.
    struct CrossEntropyResult {
        double loss_sum = 0.0;  // the cross-entropy alone
        int64_t scored = 0;
        int64_t correct = 0;         // rows where argmax == target
        double z_loss_sum = 0.0;     // z_loss (log Z)^2
        double log_z_sum = 0.0;      // log Z
        double log_z_max_abs = 0.0;  // the largest |log Z|
        double logit_sum = 0.0;      // every logit of the scored rows
        double logit_max = 0.0;      // the largest of them (0 when nothing is scored)
    };
    virtual CrossEntropyResult cross_entropy(float* dlogits, const float* logits, const int32_t* targets,
                                             int n, int vocab, bool want_gradient, float z_loss) = 0;

    // Host-side sums of squares (double) of each slice of base.
    virtual void sum_squares(const float* base, const std::vector<Slice>& slices, double* host_out) = 0;
    // Host-side plain sums (double) of each slice of base (with sum_squares: means and variances).
    virtual void sum_values(const float* base, const std::vector<Slice>& slices, double* host_out) = 0;
    // Host-side counts of each slice's elements below `threshold` (Adam's second moment under eps^2: the
    // share of coordinates whose update epsilon damps).
    virtual void count_below(const float* base, const std::vector<Slice>& slices, float threshold,
                             double* host_out) = 0;
    // Both in one call (a backend may read base once): sums[s] and squares[s] as the two above give.
    virtual void sum_values_and_squares(const float* base, const std::vector<Slice>& slices, double* sums,
                                        double* squares) {
        sum_values(base, slices, sums);
        sum_squares(base, slices, squares);
    }

    // update = optimizer step from (grad * grad_scale, moments); param += update. update is kept for
    // telemetry (update/parameter ratio).
    virtual void optimizer_update(const OptimizerStep& step, float* param, const float* grad, float* m,
                                  float* v, float* update, size_t count) = 0;
    // The same over every slice of the parameter-layout buffers (slice s with weight_decays[s]), in one
    // call; with telemetry, also param_squares[s] and update_squares[s]: the sums of squares of the
    // updated parameters and of the updates (a backend may take them in the same pass).
    struct UpdateSquares {
        double* params = nullptr;  // both null: no telemetry
        double* updates = nullptr;
    };
    virtual void optimizer_update_slices(OptimizerStep step, const std::vector<Slice>& slices,
                                         const float* weight_decays, float* params, const float* grads,
                                         float* m, float* v, float* update, UpdateSquares squares) {
        for (size_t s = 0; s < slices.size(); ++s) {
            const size_t at = slices[s].offset;
            step.weight_decay = weight_decays[s];
            optimizer_update(step, params + at, grads + at, m + at, v + at, update + at, slices[s].count);
        }
        if (squares.params) sum_squares(params, slices, squares.params);
        if (squares.updates) sum_squares(update, slices, squares.updates);
    }

    virtual void scale(float* x, float factor, size_t count) = 0;
    // dst += src
    virtual void add(float* dst, const float* src, size_t count) = 0;

    // Emulated mixed precision (docs/precision.md): src rounded to `format` into dst by format_rounding.h's
    // round_with (dst may be src; a null dst only measures). tally (backend memory, 3 floats; may be null)
    // gathers what the rounding did: [0] += values that overflowed, [1] += values that underflowed, and
    // [2] becomes the larger of itself and the largest |x| among finite src values.
    virtual void round_to_format(float* dst, const float* src, size_t count, FormatLimits format,
                                 float* tally) = 0;
};

// device: "auto" picks CUDA only when compiled in, a GPU answers and it passes the installed GPU check
// (NormLab's self-check, on its first use; the verdict is cached: engine/selfcheck/gpu_selftest.h),
// else the CPU; `reason` says which and why. "cuda" without a usable GPU throws ResourceError.
// threads 0 = every core.
std::unique_ptr<Backend> make_backend(const std::string& device, int threads, std::string* reason);

// The check a GPU passes before make_backend hands it out: why it must not be used, or empty. The
// self-check trains tiny models, so it lives above model/ and train/ (which make backends) and each
// program installs it when it starts (install_gpu_selfcheck); with none installed no GPU is handed out.
using GpuCheck = std::function<std::string(Backend& gpu)>;
void set_gpu_check(GpuCheck check);

// GPU 0's CUDA backend before any check (the check runs on it); throws ResourceError naming why there is
// none: no GPU answered, it could not be set up, or this build has no CUDA backend.
std::unique_ptr<Backend> make_unchecked_gpu_backend();

}  // namespace normlab
