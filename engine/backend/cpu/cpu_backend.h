// The CPU backend NormLab trains with: the reference ops' maths, made fast. Each op cuts its rows (or
// parameter rows) into chunks that its own task pool's threads claim, with single-threaded Eigen
// products inside, and takes its scratch from a workspace that only grows, so
// steady-state training steps allocate nothing. tests/engine/test_fast_ops.cpp holds it to the reference.
#pragma once
#include <array>
#include <vector>

#include "engine/backend/cpu/cpu_gemm.h"
#include "engine/backend/cpu/cpu_kernels.h"
#include "engine/backend/cpu/cpu_reference_backend.h"
#include "engine/backend/cpu/cpu_task_pool.h"

namespace normlab {

class CpuBackend final : public CpuReferenceBackend {
  public:
    // linear_kernel computes the linear layers' forward and dx products; the weight gradients and
    // attention use own_kernel_if_as_wide(linear_kernel) (cpu_gemm.h).
    explicit CpuBackend(int threads, GemmKernel linear_kernel = linear_gemm_kernel_from_environment())
        : CpuBackend(threads, linear_kernel, own_kernel_if_as_wide(linear_kernel)) {}
    // Both chosen (the tests hold each combination to the reference).
    CpuBackend(int threads, GemmKernel linear_kernel, GemmKernel other_kernel)
        : CpuReferenceBackend(threads),
          m_pool(m_threads),
          m_linear_kernel(linear_kernel),
          m_other_kernel(other_kernel) {}

    std::string name() const override;
    void fill(float* dst, float value, size_t count) override;

    void embedding_forward(float* x, const int32_t* tokens, const float* wte, const float* wpe, int batch,
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

    void depth_softmax_forward(float* p, const float* logits, int sources, int n) override;
    void depth_softmax_backward(float* dlogits, const float* dp, const float* p, int sources, int n) override;
    void depth_mix_forward(float* h, const float* p, const float* v, int sources, int n, int d) override;
    void depth_mix_backward(float* dv, float* dp, const float* dh, const float* p, const float* v,
                            int sources, int n, int d) override;
    void gated_forward(FeedForward kind, float* h, const float* gate, const float* up, size_t count) override;
    void gated_backward(FeedForward kind, float* dgate, float* dup, const float* dh, const float* gate,
                        const float* up, size_t count) override;
    void rope(float* x, int stride, int rows, int seq, int heads, int head_dim, float theta,
              bool inverse) override;

    void residual_forward(float* s, const float* x, const float* f, ScaleRef c, ScaleRef a,
                          size_t count) override;
    bool fuses_residual_sums() const override { return true; }
    void residual_forward_with_sums(float* s, const float* x, const float* f, ScaleRef c, ScaleRef a,
                                    size_t count, ResidualSums sums) override;
    void residual_backward(float* dx, float* df, float* dc, float* da, const float* ds, const float* x,
                           const float* f, ScaleRef c, ScaleRef a, size_t count) override;

    CrossEntropyResult cross_entropy(float* dlogits, const float* logits, const int32_t* targets, int n,
                                     int vocab, bool want_gradient, float z_loss) override;

    void sum_squares(const float* base, const std::vector<Slice>& slices, double* host_out) override;
    void sum_values(const float* base, const std::vector<Slice>& slices, double* host_out) override;
    void count_below(const float* base, const std::vector<Slice>& slices, float threshold,
                     double* host_out) override;
    void sum_values_and_squares(const float* base, const std::vector<Slice>& slices, double* sums,
                                double* squares) override;

    void optimizer_update(const OptimizerStep& step, float* param, const float* grad, float* m, float* v,
                          float* update, size_t count) override;
    void optimizer_update_slices(OptimizerStep step, const std::vector<Slice>& slices,
                                 const float* weight_decays, float* params, const float* grads, float* m,
                                 float* v, float* update, UpdateSquares squares) override;

    void scale(float* x, float factor, size_t count) override;
    void add(float* dst, const float* src, size_t count) override;
    void round_to_format(float* dst, const float* src, size_t count, FormatLimits format,
                         float* tally) override;

  private:
    // Scratch that lives across calls; one request per op (a larger one invalidates earlier pointers).
    double* scratch_doubles(size_t count);
    float* scratch_floats(size_t count);
    // The norm ops' rows (frozen_rstd 0 / !frozen_scale: each row's own scale; see cpu_kernels.h).
    void norm_rows_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                           const float* b, float dyt_alpha, int n, int d, float eps, float frozen_rstd);
    void norm_rows_backward(NormType type, float* dx, float* dw, float* db, float* dalpha, const float* dy,
                            const float* x, const float* stats, const float* w, float dyt_alpha, int n, int d,
                            bool accumulate_dx, bool frozen_scale);
    // host_out[k][s] = the k-th of range_sums(x, n) (an std::array<double, K>) over slice s, summed over
    // the chunks the slices are cut into.
    template <size_t K, class RangeSums>
    void reduce_slices(const float* base, const std::vector<Slice>& slices, std::array<double*, K> host_out,
                       RangeSums range_sums);

    TaskPool m_pool;
    GemmKernel m_linear_kernel;
    GemmKernel m_other_kernel;
    std::vector<double> m_doubles;
    std::vector<float> m_floats;
    std::vector<CrossEntropyTotals> m_loss_partials;  // cross_entropy's per chunk
};

}  // namespace normlab
