// The CUDA backend: cuBLAS for matrix products (fp32, no TF32; tensor cores for operands already rounded
// to bf16/fp16), kernels for everything else, one stream, and host synchronisation only where the
// interface returns host values. Follows the CPU reference's semantics op for op (tests/cuda holds it to
// them); included only by the .cu files.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/cuda/attention_layout.h"

namespace normlab {

// What a slice reduction adds up per element: the value, its square, or 1 where it is below a threshold.
struct SliceTerm {
    enum class Kind { Value, Square, Below };
    Kind kind = Kind::Value;
    float threshold = 0.0f;
    NORMLAB_HOST_DEVICE double of(float x) const {
        const double value = x;
        if (kind == Kind::Square) return value * value;
        if (kind == Kind::Below) return x < threshold ? 1.0 : 0.0;
        return value;
    }
};

class CudaBackend final : public Backend {
  public:
    // Device 0. Throws ResourceError when no usable GPU answers (no device, cuBLAS cannot start, or
    // this build has no kernels for the GPU's architecture).
    CudaBackend();
    ~CudaBackend() override;
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    std::string name() const override { return m_name; }
    std::string device() const override { return "cuda"; }
    int threads() const override { return 1; }

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
    // Bf16 and fp16 operands are multiplied on tensor cores (fp32 accumulation) unless the environment
    // sets NORMLAB_CUDA_FP32_PRODUCTS=1 (emulation's fp32 products, for measuring what native costs).
    void set_linear_operand_format(NumberFormat format) override;

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

    DeviceTraffic device_traffic() const override { return m_traffic; }

  private:
    // Device scratch that lives across calls and only grows: one request per op (a larger request
    // invalidates the pointers of earlier ones, so an op asks once and carves its pieces from it).
    void* workspace(size_t bytes);
    // A device vector of at least `count` ones (column sums of dy as a matrix-vector product).
    const float* ones(size_t count);
    // The norm ops' kernels (frozen_rstd 0 / !frozen_scale: each row's own scale).
    void norm_rows_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                           const float* b, ScaleRef alpha, int n, int d, float eps, float frozen_rstd);
    void norm_rows_backward(NormType type, float* dx, float* dw, float* db, float* dalpha, const float* dy,
                            const float* x, const float* stats, const float* w, ScaleRef alpha, int n, int d,
                            bool accumulate_dx, bool frozen_scale);
    void* device_bytes(size_t bytes, const char* what);
    void free_device_bytes(void* pointer, size_t bytes);  // cudaFree, counted out of m_bytes_held
    // An asynchronous device-to-host copy on the stream, counted into m_traffic.
    void copy_to_host(void* host_dst, const void* src, size_t bytes);
    // Gathers q, k and v from their strided rows into head-major q[3][pairs][seq][hd] (workspace).
    void gather_attention_inputs(float* q, const AttentionInputs& in, const HeadShape& shape);
    void synchronize(const char* after);
    void reduce_slices(const float* base, const std::vector<Slice>& slices, double* host_out, SliceTerm term,
                       const char* what);

    int m_device = 0;
    std::string m_name;
    cudaStream_t m_stream = nullptr;
    cublasHandle_t m_cublas = nullptr;
    bool m_native_products = true;                              // NORMLAB_CUDA_FP32_PRODUCTS unset
    cublasComputeType_t m_linear_compute = CUBLAS_COMPUTE_32F;  // set_linear_operand_format's choice
    std::unordered_map<void*, size_t> m_live;                   // allocations handed out: pointer -> bytes
    void* m_workspace = nullptr;
    size_t m_workspace_bytes = 0;
    float* m_ones = nullptr;
    size_t m_ones_count = 0;
    std::vector<unsigned long long> m_slice_chunks;  // reduce_slices' host tables, reused
    std::vector<unsigned long long> m_slice_first;
    uint64_t m_bytes_held = 0;  // device memory held now (allocations, workspace, ones)
    DeviceTraffic m_traffic;
};

}  // namespace normlab
