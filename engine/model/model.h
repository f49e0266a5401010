// The Transformer: decoder-only, or with model.encoder_layers an encoder and cross-attention in every
// decoder block. Parameters and gradients in single backend buffers (named views from the layout
// table), activations in one buffer per batch shape, forward + backward laid out per sub-layer for
// every norm placement x norm type x residual scheme of docs/science.md and docs/model.md.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/task.h"
#include "engine/model/backend_transfer.h"
#include "engine/model/forward_stats.h"
#include "engine/model/layout.h"
#include "engine/model/matmul_precision.h"
#include "engine/model/sublayer_slots.h"

namespace normlab {

// Bytes a trainer needs for this model: parameters, gradients, optimizer moments and updates, the
// activations of one batch x seq forward and backward pass, and the token batch. The Trainer checks
// it against the available memory before it allocates anything large.
size_t estimate_training_bytes(const ModelConfig& model, int vocab, int batch, int seq,
                               NumberFormat precision = NumberFormat::Fp32);
// What emulated precision (train.precision other than fp32) adds: MatmulPrecision's scratch.
size_t emulated_precision_bytes(const ModelConfig& model, int vocab, int batch, int seq);

// What one forward_backward pass does besides the forward pass and the loss.
struct PassOptions {
    bool backward = false;         // zero and fill the gradient buffer
    bool attention_stats = false;  // attention statistics (telemetry steps)
    float z_loss = 0.0f;           // > 0 adds z_loss (log Z)^2 per scored position to the objective
                                   // (its gradient; the stats report it apart from the cross-entropy)
};

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
    // Encoder-decoder only: the source length the last pass used (memory keys [0, source_len)), else 0.
    int source_len() const { return m_source_len; }

    // Draws every parameter from the config's init scheme (plus DeepNorm beta, ReZero 0, Admin omega).
    void initialize(uint64_t seed);
    // Re-draws attention V, output, FFN weights with DeepNorm's beta scaling. Returns the entries touched.
    std::vector<int> reinitialize_deepnorm_beta(uint64_t seed);
    // New wiring (placement, norm type, residual, DeepNorm alpha, QK-norm), same parameters. Entries that
    // become active start at their init values (norm gain 1, bias 0, DyT alpha 0.5, ReZero 0, Admin closed
    // form). Returns those entries so the optimizer can zero their moments.
    std::vector<int> set_wiring(const ModelConfig& wiring);
    // Admin's profiled initialisation: omega per sub-layer from one batch (docs/science.md, Admin).
    void profile_admin(const Batch& batch);
    // The training step (1 = the first) the next passes belong to, for the norm-gain and residual
    // warmups; until it is set, passes run as after every warmup (inference, probes).
    void set_training_step(int64_t step) { m_training_step = step; }
    // The warmups' factors at the current training step: every norm gain's, and block `block`'s branch
    // (block 0 is ProRes's l = 1; per stack).
    float norm_gain_scale() const;
    float residual_warmup_scale(int block) const;
    // Emulated mixed precision (train.precision; matmul_precision.h) from the next pass on, and the loss
    // scale the loss's gradient is multiplied by before backward (train.loss_scale; 1: none).
    void set_precision(NumberFormat format) { m_matmuls.set_format(format); }
    NumberFormat precision() const { return m_matmuls.format(); }
    void set_loss_scale(float scale) { m_loss_scale = scale; }

    // Forward pass, and backward as `options` ask (PassOptions). Throws InputError for token ids
    // outside the vocabulary. The stats live in the model and are overwritten by the next pass (no
    // allocation per pass). Called with the options named: forward_backward(batch, {.backward = true}).
    const ForwardStats& forward_backward(const Batch& batch, const PassOptions& options);

    // Host copies, from the last forward pass, of a block's output (the residual stream after it,
    // [batch * seq, d]) and of the head's input (after the final norm, if any).
    std::vector<float> read_block_output(int block);
    // The same for an encoder block, and the encoder's memory (after its final norm, if any).
    std::vector<float> read_encoder_block_output(int block);
    std::vector<float> read_memory();
    std::vector<float> read_head_input();
    // After a pass without backward (which leaves the logits in place): [batch * seq, vocab].
    std::vector<float> read_logits();

    // Moving to another backend, in two calls around the transfer's commit(): stage_move() copies the
    // parameters, gradients and the last pass's activations to transfer.target(); moved_to() then
    // points the model at that backend and re-derives the activation views.
    void stage_move(BackendTransfer& transfer);
    void moved_to(Backend& target);

    // Norm-free inference (frozen_norms.cpp; Heimersheim 2024): the model's norms with a per-token
    // scale, by the layout entry of their gain, in forward order (the encoder's blocks and final norm,
    // then the decoder's); none with DyT, BatchNorm or PowerNorm, and QK-norm is not among them.
    std::vector<int> scaled_norms() const;
    // From the next pass on, the norm whose gain is `entry` divides every token by the fixed `std`
    // instead of its own standard deviation (LayerNorm still subtracts each token's mean); std 0 gives
    // it its per-token scale back. Throws std::invalid_argument for an entry not in scaled_norms().
    void freeze_norm(int entry, double std);
    bool norm_frozen(int entry) const { return m_frozen_rstd[entry] > 0.0f; }
    // The SublayerKind of the sub-layer a scaled norm belongs to, or -1 for a final norm.
    int scaled_norm_sublayer(int entry) const;
    // After a forward pass: for each of scaled_norms(), the sum and the sum of squares over the pass's
    // tokens of its per-token standard deviation sqrt(Var + eps) (a frozen norm's: its fixed one).
    struct NormStdSums {
        double sum = 0.0, squares = 0.0;
        size_t tokens = 0;
    };
    std::vector<NormStdSums> norm_std_sums();

    // BatchNorm / PowerNorm (model.norm_type; feature_norms.cpp): the statistics the next passes normalise
    // with. The trainer's steps run BatchUpdating and its validation Running; Batch (training's
    // statistics, nothing moves) until set, for gradient checks and probes.
    void set_feature_statistics(FeatureStatistics mode) { m_feature_norms.mode = mode; }
    FeatureStatistics feature_statistics() const { return m_feature_norms.mode; }
    // The running statistics a checkpoint keeps (docs/formats.md#checkpoints): BatchNorm's
    // "<norm>.running_mean" and "<norm>.running_var", PowerNorm's "<norm>.running_phi" (psi^2) and
    // "<norm>.nu", of every active norm ("blocks.0.norm1"); none for the other norm types.
    struct StateBuffer {
        std::string name;
        int64_t count = 0;
        float* data = nullptr;  // backend memory
    };
    std::vector<StateBuffer> feature_norm_buffers() const;
    // Every norm's running statistics back to their start: mean 0, variance 1, nu 0; PowerNorm's psi^2
    // then comes from the next training pass's batch (feature_norms.cpp).
    void reset_feature_norms();
    // The running statistics hold trained values (a checkpoint's, just loaded): nothing to seed.
    void keep_feature_norms() { m_feature_norms.seed_pending = false; }

    // Host copies of one entry's parameters / gradients.
    std::vector<float> read_entry(int entry, bool gradient = false);
    void write_entry(int entry, const std::vector<float>& values);

  private:
    // One residual sub-layer of the forward pass: whose weights, what it computes, and where its
    // activations (slot) and attention statistics (attention_slot) live.
    struct SublayerStep {
        int block = 0;
        bool encoder = false;
        int kind = 0;  // a SublayerKind: attention, FFN or cross-attention
        int slot = 0;  // m_sublayers, the residual sums' slices and ForwardStats' per-sub-layer lists
        int attention_slot = -1;
        NormPlacement placement = NormPlacement::Pre;  // the block's (Mix-LN: Post or Pre by depth)
    };
    // Pointers into the activation buffer for one sub-layer (n = batch * seq rows).
    struct SublayerActivations {
        const float* input = nullptr;  // x entering the sub-layer [n, d]
        float* normed = nullptr;       // Norm_in(x) [n, d] (pre, peri)
        float* normed_stats = nullptr;
        float* qkv = nullptr;            // q, k, v as projection_places says (before QK-norm; turned by
                                         // RoPE in place without it)
        float* qk_normed = nullptr;      // QK-norm only: normalised q [n, d] then k [n, kv_width]
        float* qk_stats = nullptr;       // their norm statistics [2, n * heads, 2]
        float* kv_repeated = nullptr;    // grouped-query attention: k, v for every query head [2, n, d]
        float* probs = nullptr;          // [batch, heads, seq, seq]
        float* heads = nullptr;          // attention output before the projection [n, d]
        float* hidden_pre = nullptr;     // fc1 output [n, d_ff] (a gated FFN's up projection)
        float* gate = nullptr;           // a gated FFN's gate projection [n, d_ff]
        float* hidden = nullptr;         // activation(fc1 output), gated: act(gate) * up [n, d_ff]
        float* branch = nullptr;         // F(u) [n, d]
        float* branch_normed = nullptr;  // Peri-LN's Norm_out(F(u)) [n, d]
        float* branch_stats = nullptr;
        float* sum = nullptr;     // residual sum c x + a f [n, d]
        float* output = nullptr;  // Post-LN's Norm(sum) [n, d]
        float* output_stats = nullptr;
    };
    // A sub-layer's norms: Norm_in (also Post-LN's norm after the sum) and Peri-LN's Norm_out.
    static const NormIndex& input_norm_of(const BlockIndex& index, int kind);
    static const NormIndex& output_norm_of(const BlockIndex& index, int kind);
    // One of the model's norms (the config's type, width d_model) on n rows, forward and backward;
    // with its frozen scale when it has one (frozen_norms.cpp).
    void apply_norm(const NormIndex& norm, float* y, float* stats, const float* x, int n);
    void allocate_feature_norms();  // m_feature_norms, at construction
    void apply_feature_norm(const NormIndex& norm, float* y, const float* x, int n);  // apply_norm's
    FeatureNormState feature_state(int entry) const;  // the state of the norm whose gain is `entry`
    void apply_norm_backward(const NormIndex& norm, float* dx, const float* dy, const float* x,
                             const float* stats, int n, bool accumulate_dx);
    // Each per-token-scaled norm the passes apply: its gain entry, where its statistics live and
    // whose norm it is.
    struct NormSite {
        int entry = -1;
        const float* stats = nullptr;
        int sublayer = -1;     // its sub-layer's SublayerKind; -1: a final norm
        int slot = -1;         // its sub-layer's slot (SublayerSlots); -1: a final norm
        bool output = false;   // Peri-LN's Norm_out of the sub-layer (else its Norm_in or Post-LN's norm)
        bool encoder = false;  // a final norm: the encoder's (else the decoder's)
    };
    std::vector<NormSite> norm_sites() const;
    void fill_norm_sites(std::vector<NormSite>& sites) const;  // the same into `sites`, reusing its memory
    void ensure_activations(int batch, int seq);
    void release_activations();  // the next pass allocates them again (e.g. after QK-norm comes or goes)
    void carve_activations();    // points every activation view into m_activations for m_batch x m_seq
    // The residual schemes' [n, d] views, from cursor on: B2T's gradient, ResiDual's dual streams and their
    // gradient, DenseFormer's averages and output gradients (m_dense), AttnRes' buffers (m_attn_res);
    // throws std::logic_error when the views overrun the buffer (activation_floats and the carving
    // disagree).
    void carve_scheme_buffers(float*& cursor, size_t nd);
    void carve_attn_res_buffers(float*& cursor, size_t n);  // m_attn_res, from cursor on (n rows)
    const float* head_input_buffer() const;  // the head's input: final norm output or last sub-layer
    void build_plan();
    // Floats of one attention sub-layer's statistics: the entropy sum, then each head's largest logit.
    size_t attention_stat_floats() const { return 1 + static_cast<size_t>(m_config.heads); }
    size_t attention_stat_total() const {  // of every attention sub-layer
        return static_cast<size_t>(SublayerSlots(m_config).attention_count()) * attention_stat_floats();
    }
    const SublayerStep& plan_step(int slot) const;  // the sub-layer in `slot` (it must exist)
    const BlockIndex& block_index(const SublayerStep& step) const;
    AttentionShape attention_shape(const SublayerStep& step, int batch, int seq) const;
    // Runs the encoder on m_embedded and returns the memory (its output after the final norm, if any).
    const float* forward_encoder(int batch, int seq, bool attention_stats);
    void finish_memory(int batch, int seq);  // the encoder's final norm (pre, peri) on its last output
    // The decoder's stack on m_embedded (returns its output); its final norm into m_final_normed (with
    // ResiDual's sum); their backward passes, down to the embeddings' gradient.
    const float* forward_decoder(int batch, int seq, bool attention_stats);
    void forward_final_norm(const float* x, int n);
    void backward_final_norm(const float* x, int n);
    void backward_decoder(int batch, int seq);
    void backward_encoder(int batch, int seq);
    void forward_sublayer(const SublayerStep& step, const float* x, int batch, int seq, bool attention_stats);
    void backward_sublayer(const SublayerStep& step, int batch, int seq);
    // backward_sublayer's parts: through the post norm, the residual sum and Peri-LN's Norm_out, which
    // leaves the shortcut's part of dL/dx in the residual-gradient scratch and returns dL/dF for the
    // branch F; then F's backward, which writes (adds, with accumulate_u) dL/du to grad_u.
    const float* backward_residual(const SublayerStep& step, int n);
    // dL/dF from dL/d(the added branch): through Peri-LN's Norm_out, or grad_branch itself.
    const float* branch_output_norm_backward(const SublayerStep& step, const float* grad_branch, int n);
    // The FFN (feed_forward.cpp): fc2(activation(fc1 u)), or gated fc2(act(gate u) * fc1 u), into
    // acts.branch.
    void forward_feed_forward(const BlockIndex& index, SublayerActivations& acts, const float* u, int n);
    void backward_feed_forward(const BlockIndex& index, const SublayerActivations& acts,
                               const float* grad_branch, const float* u, float* grad_u, bool accumulate_u,
                               int n);
    void backward_attention(const SublayerStep& step, const float* grad_branch, const float* u, float* grad_u,
                            bool accumulate_u, int batch, int seq);
    const float* sublayer_output(const SublayerStep& step) const;
    // How a branch's input u reaches its products: its input norm's output, rounded where it lies
    // (forward_sublayer), or the residual stream itself (Post-LN, no norm), which they round a copy of.
    static MatmulInput matmul_input(const SublayerActivations& acts, const float* u) {
        return u == acts.normed ? MatmulInput::Rounded : MatmulInput::Shared;
    }
    const float* memory_buffer() const;  // the encoder's output after its final norm, if any
    AttentionInputs attention_inputs(const SublayerActivations& acts, bool cross) const;
    // Attention's input projections (attention_projection.cpp): q from u, k and v from u or (cross-
    // attention) the memory, then QK-norm; returns where attention reads them.
    AttentionInputs project_attention(const SublayerStep& step, const float* u, int n);
    // Where the projections put q, k and v in `base` (acts.qkv, or the gradient scratch that mirrors it):
    // packed rows [q | k | v] of d + 2 kv_width floats (cross-attention: q [n, d], then kv [n, 2d]), or
    // with QK-norm planar q [n, d], k and v [n, kv_width].
    AttentionGrads projection_places(float* base, bool cross, int n) const;
    int kv_width(bool cross) const;       // the rows of k and of v: key_value_width, cross-attention d
    bool grouped(bool cross) const;       // grouped-query attention: fewer key/value heads than heads
    HeadGroups head_groups(int n) const;  // self-attention's key/value heads on n rows
    // Grouped-query attention: k (after QK-norm and RoPE) and v repeated into acts.kv_repeated.
    void repeat_key_value_heads(const SublayerActivations& acts, bool cross, int n);
    // QK-norm of the raw q and k into acts.qk_normed (then RoPE, in self-attention); qk_rows: its rows,
    // one per (position, head) of q (part 0) or of k (part 1, the key/value heads).
    void normalize_qk(const SublayerStep& step, const AttentionGrads& raw, int n);
    int qk_rows(bool cross, int part, int n) const;
    // RoPE (model.position=rope) in place on n rows of q (heads) and of k (key/value heads); inverse:
    // the backward on dq, dk. Nothing for other positions.
    void rotate_qk(float* q, int q_stride, float* k, int k_stride, int n, bool inverse);
    // Attention's backward into dq, dk, dv where the projections wrote q, k, v (the gradient scratch):
    // summing grouped heads, turning RoPE back.
    void backward_attention_inputs(const SublayerStep& step, const float* grad_heads, int batch, int seq);
    // Their backward pass from dq, dk, dv in `grads` (planar with QK-norm, else packed as attention's
    // backward wrote them): adds the weights' gradients, writes (adds, with accumulate_u) dL/du to grad_u,
    // and adds cross-attention's key and value part to the memory's gradient. `scratch` holds [n, d].
    void backward_attention_projection(const SublayerStep& step, float* grads, const float* u, float* grad_u,
                                       bool accumulate_u, float* grad_memory, float* scratch, int n);
    // m_stats.decoder's q_rms and k_rms from the decoder's attention inputs (model_telemetry.cpp)
    void measure_qk_rms(int n);
    // fills m_stats.sublayers' norm scales and both final norms' (norm_scales.cpp), from norm_sites()
    void measure_norm_scales(int n);
    // m_stats.sublayers.norm_stat_gap: under BatchNorm on batch statistics each sub-layer's input norm's
    // (Post-LN: its norm's) gap to the running statistics (feature_norms.cpp); kNotRecorded otherwise
    void measure_feature_norm_gaps();
    struct NormScaleTarget {  // where a measured norm's mean and CV go in m_stats
        double* mean;
        double* cv;
    };
    NormScaleTarget norm_scale_target(const NormSite& site);  // where a site's mean and CV go
    void check_batch(const Batch& batch) const;   // InputError for bad token ids or too long a sequence
    int source_length(const Batch& batch) const;  // memory keys: 0 without an encoder, else [1, seq]
    std::vector<float> read_buffer(const float* buffer);  // host copy of an [n, d] activation
    void initialize_entry(int entry, uint64_t seed);
    void refresh_active();
    ScaleRef shortcut_scale(const SublayerStep& step) const;
    ScaleRef branch_scale(const SublayerStep& step) const;
    // The factor on the sub-layer's input norm's output: LayerNorm Scaling's 1/sqrt(l) for block l
    // (l = 1, 2, ... per stack) with model.residual=lns, else 1.
    float input_norm_scale(const SublayerStep& step) const;
    // B2T: whether the step's residual sum also adds its block's input (a Post-LN block's FFN), and
    // that input (the block's first sub-layer's).
    bool carries_block_input(const SublayerStep& step) const;
    const float* block_input(const SublayerStep& step) const;
    // Whether the backend's fused residual sums serve the telemetry (not with B2T's extra addend).
    bool fused_residual_sums() const;
    // ResiDual's dual stream of a stack (nullptr without one), and what its final norm reads: the dual
    // stream, or the stack's last sub-layer output.
    float* dual_stream(bool encoder) const;
    const float* final_norm_input(bool encoder) const;
    // What the sub-layer after `step` reads: its output, or with DenseFormer at a block's end the block's
    // weighted average (model_dense.cpp).
    const float* stack_output(const SublayerStep& step) const;
    bool ends_dense_block(const SublayerStep& step) const;
    float* dense_average(const SublayerStep& step) const;  // the block's X (it must end a dense block)
    const float* dense_source(const SublayerStep& step, int output) const;  // 0: the embeddings
    void dense_forward(const SublayerStep& step, size_t nd);
    // On entry the residual-gradient scratch holds dL/d(the block's average); adds each averaged
    // output's share to its gradient and leaves dL/d(the block's own output) in the scratch.
    void dense_backward(const SublayerStep& step, size_t nd);
    void begin_dense_backward(size_t nd);  // the outputs' gradients zeroed
    void end_dense_backward(size_t nd);    // the embeddings' share added to dL/dx
    const float* added_branch(const SublayerStep& step) const;
    // Attention Residuals (model_attn_res.cpp): the stack's input is source 0, the sub-layer of slot j's
    // branch source j + 1, and its output the average over sources 0..j + 1.
    bool attn_res() const { return m_config.residual == Residual::AttnRes; }
    void begin_attn_res(int n);  // source 0 (the embeddings) and its key
    void attn_res_forward(const SublayerStep& step, const float* f, int n);
    // On entry the residual-gradient scratch holds dL/d(the sub-layer's average): adds each source's
    // share to its gradient, zeroes the scratch (no shortcut reaches x) and returns dL/d(the branch).
    const float* attn_res_backward(const SublayerStep& step, int n);
    void begin_attn_res_backward(int n);  // the sources' and keys' gradients zeroed
    void end_attn_res_backward(int n);    // the embeddings' share added to dL/dx
    // Telemetry (model_telemetry.cpp): m_stats' lists and m_telemetry reserved once for the layer count,
    // and filled after a forward pass from its loss and (with attention_stats) the attention, norm and
    // dependency measurements.
    void reserve_stats();
    StackStats& stack_stats(const SublayerStep& step);  // the stack (of m_stats) a sub-layer belongs to
    const ForwardStats& collect_stats(const Backend::CrossEntropyResult& loss, bool attention_stats);
    void measure_branch_shares(size_t count);
    void collect_residual_stats(size_t nd);
    void collect_attention_stats(int batch, int seq);
    // After a telemetry pass's backward under emulated precision: each block's overflow and underflow
    // fractions and its residual stream's headroom (model_telemetry.cpp).
    void collect_precision_stats();
    int head_site() const { return static_cast<int>(m_sublayers.size()); }  // the head's tally site
    // Uploads the batch's targets, unscoring those an encoder's memory would give away.
    void upload_targets(const Batch& batch);
    // A parameter entry as the passes read it: a norm gain during norm-gain warmup is its scaled copy.
    const float* entry_ptr(int entry) const {
        if (entry < 0) return nullptr;
        if (const float* scaled = m_gain_warmup.scaled(entry)) return scaled;
        return m_params + m_layout.entries[entry].offset;
    }
    // Norm-gain warmup (warmups.cpp): before a pass, the scaled copies of the gains; after its backward,
    // the gains' gradients scaled back (dL/dg = s dL/d(s g)).
    void scale_norm_gains();
    void scale_norm_gain_grads();
    float* grad_ptr(int entry) { return entry < 0 ? nullptr : m_grads + m_layout.entries[entry].offset; }

    // Norm-gain warmup's state: the factor of the current pass and the scaled copies of the norm gains.
    struct GainWarmup {
        static constexpr size_t kNoShadow = static_cast<size_t>(-1);
        float scale = 1.0f;           // the factor for the current pass
        float* shadow = nullptr;      // the scaled norm gains, by offsets (backend memory, >= 1 float)
        std::vector<size_t> offsets;  // per entry: its place in shadow, or kNoShadow
        size_t total = 0;             // floats of the scaled gains
        // The scaled copy of `entry` the current pass reads, or nullptr (no warmup now, not a gain).
        const float* scaled(int entry) const {
            return scale != 1.0f && offsets[entry] != kNoShadow ? shadow + offsets[entry] : nullptr;
        }
    };
    // The telemetry's host scratch, sized once from the layer count and reused by every pass.
    struct TelemetryScratch {
        std::vector<Slice> branch_slices;  // the branches alone
        std::vector<Slice> input_slices;   // the sub-layers' inputs
        // by slot: the residual sums' sums of values and of squares, then the branches', then the
        // inputs' [3 * slots]
        std::vector<double> slice_squares, slice_sums;
        std::vector<float> attention_host;                // m_attention_stats on the host
        std::vector<NormSite> norm_sites;                 // measure_norm_scales' list
        std::vector<Slice> norm_scale_slices;             // each norm's rstd per row
        std::vector<NormScaleTarget> norm_scale_targets;  // one per norm measured
        std::vector<double> norm_scale_sums, norm_scale_squares;
        std::vector<Slice> qk_slices;  // the queries' and keys' rows, for measure_qk_rms
        std::vector<double> qk_squares;
        std::vector<float> feature_state_host;  // one BatchNorm's state, for measure_feature_norm_gaps
    };

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
    std::vector<SublayerStep> m_plan;  // the encoder's sub-layers, then the decoder's, in forward order
    int m_encoder_steps = 0;           // how many of m_plan belong to the encoder
    int m_source_len = 0;              // keys of the memory that the last pass allowed (encoder only)
    std::vector<SublayerActivations> m_sublayers;  // by slot (SublayerSlots)
    float* m_memory = nullptr;  // the encoder's final norm output [n, d] (pre, peri; ResiDual x + Norm(dual))
    float* m_memory_stats = nullptr;
    float* m_dual = nullptr;          // ResiDual: the decoder's dual stream [n, d] (has_dual_stream)
    float* m_encoder_dual = nullptr;  // ResiDual: the encoder's
    // DenseFormer: each block's average [n, d] (decoder, encoder), and in the backward pass each output's
    // gradient, summed over the averages that read it (outputs 0..blocks; the stacks take turns).
    struct DenseBuffers {
        std::vector<float*> averages;
        std::vector<float*> encoder_averages;
        std::vector<float*> output_grads;
    };
    DenseBuffers m_dense;
    // Attention Residuals, sources 0..2 x layers contiguous: their values (the embeddings, then each
    // sub-layer's branch) and RMSNorm'd keys [sources][n][d] with the keys' statistics [sources][2n], each
    // average's weights (slot j: [j + 2][n], one after another), and in backward the gradients of the
    // values, keys and one average's weights; a ones vector [d] (the keys' RMSNorm has no gain) and the
    // gain gradient the norm op writes and nothing reads [d].
    struct AttnResBuffers {
        float* values = nullptr;
        float* keys = nullptr;
        float* key_stats = nullptr;
        float* weights = nullptr;
        float* value_grads = nullptr;
        float* key_grads = nullptr;
        float* weight_grads = nullptr;
        float* ones = nullptr;
        float* unused_gain_grad = nullptr;
    };
    AttnResBuffers m_attn_res;
    float* m_embedded = nullptr;
    float* m_final_normed = nullptr;  // the final norm's output (ResiDual: x + FinalNorm(dual))
    float* m_final_stats = nullptr;
    float* m_logits = nullptr;
    float* m_attention_stats = nullptr;   // [attention sub-layers * 2]: entropy sum, max logit
    std::vector<int32_t> m_host_targets;  // encoder-decoder: the targets with the source part unscored
    // Backward scratch buffers, by role (carve_activations).
    enum Scratch {
        kGradResidual,
        kGradTemp,
        kGradBranch,
        kGradBranchNormed,
        kGradNormIn,
        kGradHeads,
        kGradQkv,
        kGradHidden,
        kGradGate,        // a gated FFN only: dL/d(gate)
        kGradKvRepeated,  // grouped-query attention only: dL/dk, dL/dv of the repeated heads [2, n, d]
        kGradMemory,      // encoder-decoder only: dL/d(memory), summed over the decoder's cross-attentions
        kGradBlockInput,  // B2T only: dL/ds of a Post-LN block's last sum, owed to the block's input
        kGradDual,        // ResiDual only: dL/d(dual stream), one value for every branch the stream adds
        kScratchCount
    };
    std::vector<float*> m_scratch;  // by Scratch role
    std::vector<Slice> m_resid_slices;

    // Telemetry results and host scratch, sized once from the layer count (see ForwardStats).
    ForwardStats m_stats;
    TelemetryScratch m_telemetry;
    int64_t m_training_step = int64_t{1} << 40;  // see set_training_step
    GainWarmup m_gain_warmup;
    // BatchNorm / PowerNorm state: per norm gain entry, 5 d floats of `buffer` from its offset
    // (feature_norms.cpp), and the mode of the next passes.
    struct FeatureNorms {
        static constexpr size_t kNone = static_cast<size_t>(-1);
        float* buffer = nullptr;
        std::vector<size_t> offsets;  // by layout entry: a gain's place in buffer, or kNone
        size_t total = 0;
        FeatureStatistics mode = FeatureStatistics::Batch;
        // PowerNorm's psi^2 is still its reset value: the next training pass takes the batch's
        bool seed_pending = true;
    };
    FeatureNorms m_feature_norms;

    MatmulPrecision m_matmuls;
    float m_loss_scale = 1.0f;
    std::vector<float> m_frozen_rstd;  // per layout entry: a norm gain's frozen 1/std, or 0 (per token)
};

}  // namespace normlab
