// The readable CPU reference backend: Eigen for matrix products, OpenMP across rows, double accumulators
// in reductions. Deterministic for a given thread count (static schedules, fixed reduction order).
// CpuBackend (cpu_backend.h) derives from it with the fast paths; tests hold those to these ops.
#pragma once
#include "engine/backend/backend.h"

namespace normlab {

class CpuReferenceBackend : public Backend {
  public:
    explicit CpuReferenceBackend(int threads);

    std::string name() const override;
    std::string device() const override { return "cpu"; }
    int threads() const override { return m_threads; }
    // "2 threads", "1 thread": for the backends' names.
    std::string thread_count_text() const;

    float* allocate(size_t count) override;
    int32_t* allocate_ints(size_t count) override;
    void release(void* pointer) override;
    void upload(float* dst, const float* host_src, size_t count) override;
    void upload_ints(int32_t* dst, const int32_t* host_src, size_t count) override;
    void download(float* host_dst, const float* src, size_t count) override;
    void fill(float* dst, float value, size_t count) override;
    void copy(float* dst, const float* src, size_t count) override;

    void embedding_forward(float* x, const int32_t* tokens, const float* wte, const float* wpe, int batch,
                           int seq, int d) override;
    void embedding_backward(float* dwte, float* dwpe, const float* dx, const int32_t* tokens, int batch,
                            int seq, int d) override;

    void linear_forward(float* y, const float* x, const float* w, const float* b, int n, int in,
                        int out) override;
    void linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x, const float* w,
                         int n, int in, int out, bool accumulate_dx) override;

    void norm_forward(NormType type, float* y, float* stats, const float* x, const float* w, const float* b,
                      ScaleRef alpha, int n, int d, float eps) override;
    void norm_backward(NormType type, float* dx, float* dw, float* db, float* dalpha, const float* dy,
                       const float* x, const float* stats, const float* w, ScaleRef alpha, int n, int d,
                       bool accumulate_dx) override;
    void frozen_norm_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                             const float* b, float rstd, int n, int d) override;
    void frozen_norm_backward(NormType type, float* dx, float* dw, float* db, const float* dy, const float* x,
                              const float* stats, const float* w, int n, int d, bool accumulate_dx) override;

    void feature_norm_forward(NormType type, float* y, const float* x, const float* w, const float* b,
                              const FeatureNormState& state, FeatureStatistics mode, int n, int d) override;
    void feature_norm_backward(NormType type, float* dx, float* dw, float* db, const float* dy,
                               const float* x, const float* w, const FeatureNormState& state,
                               FeatureStatistics mode, int n, int d, bool accumulate_dx) override;

    using Backend::attention_backward;
    using Backend::attention_forward;
    void attention_forward(float* out, float* probs, const AttentionInputs& in, const AttentionShape& shape,
                           AttentionStatsRef stats) override;
    void attention_backward(const AttentionGrads& grads, const float* dout, const AttentionInputs& in,
                            const float* probs, const AttentionShape& shape) override;
    void repeat_heads(float* dst, const float* src, int stride, HeadGroups heads) override;
    void sum_head_groups(float* dst, int stride, const float* src, HeadGroups heads) override;

    void activation_forward(Activation kind, float* y, const float* x, size_t count) override;
    void activation_backward(Activation kind, float* dx, const float* dy, const float* x,
                             size_t count) override;

    void gated_forward(FeedForward kind, float* h, const float* gate, const float* up, size_t count) override;
    void gated_backward(FeedForward kind, float* dgate, float* dup, const float* dh, const float* gate,
                        const float* up, size_t count) override;
    void rope(float* x, int stride, int rows, int seq, int heads, int head_dim, float theta,
              bool inverse) override;

    void depth_softmax_forward(float* p, const float* logits, int sources, int n) override;
    void depth_softmax_backward(float* dlogits, const float* dp, const float* p, int sources, int n) override;
    void depth_mix_forward(float* h, const float* p, const float* v, int sources, int n, int d) override;
    void depth_mix_backward(float* dv, float* dp, const float* dh, const float* p, const float* v,
                            int sources, int n, int d) override;
    void residual_forward(float* s, const float* x, const float* f, ScaleRef c, ScaleRef a,
                          size_t count) override;
    void residual_backward(float* dx, float* df, float* dc, float* da, const float* ds, const float* x,
                           const float* f, ScaleRef c, ScaleRef a, size_t count) override;

    CrossEntropyResult cross_entropy(float* dlogits, const float* logits, const int32_t* targets, int n,
                                     int vocab, bool want_gradient, float z_loss) override;

    void sum_squares(const float* base, const std::vector<Slice>& slices, double* host_out) override;
    void sum_values(const float* base, const std::vector<Slice>& slices, double* host_out) override;
    void count_below(const float* base, const std::vector<Slice>& slices, float threshold,
                     double* host_out) override;

    void optimizer_update(const OptimizerStep& step, float* param, const float* grad, float* m, float* v,
                          float* update, size_t count) override;

    void scale(float* x, float factor, size_t count) override;
    void add(float* dst, const float* src, size_t count) override;
    void round_to_format(float* dst, const float* src, size_t count, FormatLimits format,
                         float* tally) override;

  protected:
    int m_threads;
};

// Reads a ScaleRef on the host (the CPU backend's memory is host memory).
inline float resolve(ScaleRef ref) {
    return ref.param ? *ref.param : ref.constant;
}

}  // namespace normlab
