// The decoder-only Transformer: parameters and gradients in single backend buffers (named views from
// the layout table), activations in one buffer per batch shape, forward + backward laid out per
// sub-layer for every norm placement x norm type x residual scheme of theory.md.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/task.h"
#include "engine/model/backend_transfer.h"
#include "engine/model/layout.h"

namespace normlab {

// Per-step measurements the forward pass produces (host values). The model keeps one instance whose
// vectors are reserved for its layer count, so a pass fills them without allocating.
struct ForwardStats {
    double loss = 0.0;  // mean cross-entropy over scored positions
    int64_t scored = 0;
    int64_t correct = 0;
    std::vector<double> resid;           // per block: E||s||^2/d of the FFN residual sum (block output)
    std::vector<double> resid_attn;      // per block: the same for the attention residual sum
    std::vector<double> attn_entropy;    // per block, with attention statistics (else empty): mean
                                         // entropy of attention rows (nats)
    std::vector<double> attn_max_logit;  // per block, with attention statistics: largest scaled logit
    std::vector<double> dependency;      // per sub-layer (2 per block), with attention statistics:
                                         // Admin's Var[F(x)] / Var[x + F(x)] of the branch actually added
    int first_nonfinite_block = -1;      // first block whose residual sum is not finite; layers = the head
};

// Bytes a trainer needs for this model: parameters, gradients, optimizer moments and updates, the
// activations of one batch x seq forward and backward pass, and the token batch. The Trainer checks
// it against the available memory before it allocates anything large.
size_t estimate_training_bytes(const ModelConfig& model, int vocab, int batch, int seq);

class Model {
  public:
    Model(const ModelConfig& config, int vocab, Backend& backend);
    ~Model();
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    const ModelConfig& config() const { return m_config; }
    const ParamLayout& layout() const { return m_layout; }
    int vocab() const { return m_vocab; }
    Backend& backend() { return *m_backend; }
    float* params() { return m_params; }
    float* grads() { return m_grads; }
    bool active(int entry) const { return m_active[entry]; }

    // Draws every parameter from the config's init scheme (plus DeepNorm beta, ReZero 0, Admin omega).
    void initialize(uint64_t seed);
    // Re-draws attention V, output, FFN weights with DeepNorm's beta scaling. Returns the entries touched.
    std::vector<int> reinitialize_deepnorm_beta(uint64_t seed);
    // New wiring (placement, norm type, residual, DeepNorm alpha), same parameters. Entries that become
    // active start at their init values (norm gain 1, bias 0, DyT alpha 0.5, ReZero 0, Admin closed
    // form). Returns those entries so the optimizer can zero their moments.
    std::vector<int> set_wiring(const ModelConfig& wiring);
    // Admin's profiled initialisation: omega per sub-layer from one batch (theory.md).
    void profile_admin(const Batch& batch);

    // Forward pass; with `backward`, zeroes and fills the gradient buffer. Attention statistics are
    // computed when asked (telemetry steps). Throws InputError for token ids outside the vocabulary.
    // The stats live in the model and are overwritten by the next pass (no allocation per pass).
    const ForwardStats& forward_backward(const Batch& batch, bool backward, bool attention_stats);

    // Host copies, from the last forward pass, of a block's output (the residual stream after it,
    // [batch * seq, d]) and of the head's input (after the final norm, if any).
    std::vector<float> read_block_output(int block);
    std::vector<float> read_head_input();

    // Moving to another backend, in two calls around the transfer's commit(): stage_move() copies the
    // parameters, gradients and the last pass's activations to transfer.target(); moved_to() then
    // points the model at that backend and re-derives the activation views.
    void stage_move(BackendTransfer& transfer);
    void moved_to(Backend& target);

    // Host copies of one entry's parameters / gradients.
    std::vector<float> read_entry(int entry, bool gradient = false);
    void write_entry(int entry, const std::vector<float>& values);

  private:
    // Pointers into the activation buffer for one sub-layer (n = batch * seq rows).
    struct SublayerActivations {
        const float* input = nullptr;  // x entering the sub-layer [n, d]
        float* normed = nullptr;       // Norm_in(x) [n, d] (pre, peri)
        float* normed_stats = nullptr;
        float* qkv = nullptr;            // [n, 3d]
        float* probs = nullptr;          // [batch, heads, seq, seq]
        float* heads = nullptr;          // attention output before the projection [n, d]
        float* hidden_pre = nullptr;     // fc1 output [n, d_ff]
        float* hidden = nullptr;         // activation(fc1 output) [n, d_ff]
        float* branch = nullptr;         // F(u) [n, d]
        float* branch_normed = nullptr;  // Peri-LN's Norm_out(F(u)) [n, d]
        float* branch_stats = nullptr;
        float* sum = nullptr;     // residual sum c x + a f [n, d]
        float* output = nullptr;  // Post-LN's Norm(sum) [n, d]
        float* output_stats = nullptr;
    };
    void ensure_activations(int batch, int seq);
    void carve_activations();  // points every activation view into m_activations for m_batch x m_seq
    const float* head_input_buffer() const;  // the head's input: final norm output or last sub-layer
    void forward_sublayer(int block, int kind, const float* x, SublayerActivations& acts, int batch, int seq,
                          bool attention_stats);
    void backward_sublayer(int block, int kind, SublayerActivations& acts, int batch, int seq);
    void initialize_entry(int entry, uint64_t seed);
    void refresh_active();
    ScaleRef shortcut_scale(int block, int kind) const;
    ScaleRef branch_scale(int block) const;
    const float* added_branch(int block, int kind) const;
    void measure_dependency(size_t count);
    const float* entry_ptr(int entry) const {
        return entry < 0 ? nullptr : m_params + m_layout.entries[entry].offset;
    }
    float* grad_ptr(int entry) { return entry < 0 ? nullptr : m_grads + m_layout.entries[entry].offset; }

    ModelConfig m_config;
    int m_vocab;
    Backend* m_backend;
    ParamLayout m_layout;
    std::vector<bool> m_active;
    float* m_params = nullptr;
    float* m_grads = nullptr;

    // Activation buffer for the current batch shape.
    int m_batch = 0;
    int m_seq = 0;
    float* m_activations = nullptr;
    int32_t* m_tokens = nullptr;
    int32_t* m_targets = nullptr;
    std::vector<SublayerActivations> m_sublayers;  // [block * 2 + kind], kind 0 = attention, 1 = FFN
    float* m_embedded = nullptr;
    float* m_final_normed = nullptr;
    float* m_final_stats = nullptr;
    float* m_logits = nullptr;
    float* m_attention_stats = nullptr;  // [layers * 2]: entropy sum, max logit
    std::vector<float*> m_scratch;       // backward scratch buffers (see ensure_activations)
    std::vector<Slice> m_resid_slices;

    // Telemetry results and host scratch, sized once from the layer count (see ForwardStats).
    ForwardStats m_stats;
    std::vector<Slice> m_branch_slices;    // the branches alone
    std::vector<double> m_slice_squares;
    std::vector<double> m_slice_sums;
    std::vector<float> m_attention_host;
};

}  // namespace normlab
