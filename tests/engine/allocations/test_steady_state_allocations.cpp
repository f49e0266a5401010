// No heap allocation in steady-state training: this test binary interposes malloc and friends (glibc)
// to count every allocation of every thread (operator new, Eigen and OpenMP included). It checks the
// backend ops alone on a counting backend, then whole Trainer::step calls (data, model, telemetry,
// validation, bookkeeping) for several configs: after warm-up steps, both must allocate nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/train/trainer.h"

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* pointer, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
}

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

void note_allocation() {
    if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" {
void* malloc(size_t size) {
    note_allocation();
    return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
    note_allocation();
    return __libc_calloc(count, size);
}
void* realloc(void* pointer, size_t size) {
    note_allocation();
    return __libc_realloc(pointer, size);
}
void* memalign(size_t alignment, size_t size) {
    note_allocation();
    return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
    note_allocation();
    return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
    note_allocation();
    *out = __libc_memalign(alignment, size);
    return *out ? 0 : ENOMEM;
}
}

namespace normlab {
namespace {

// Counts the allocations made while one backend call runs (on any thread).
class CountingWindow {
  public:
    CountingWindow() { g_counting.store(true); }
    ~CountingWindow() { g_counting.store(false); }
};

// Forwards every op to the fast CPU backend and counts the allocations made inside them.
class CountingBackend final : public Backend {
  public:
    explicit CountingBackend(int threads) : m_cpu(threads) {}

    std::string name() const override { return m_cpu.name(); }
    std::string device() const override { return m_cpu.device(); }
    int threads() const override { return m_cpu.threads(); }
    float* allocate(size_t count) override { return m_cpu.allocate(count); }
    int32_t* allocate_ints(size_t count) override { return m_cpu.allocate_ints(count); }
    void release(void* pointer) override { m_cpu.release(pointer); }

    void upload(float* dst, const float* src, size_t count) override {
        CountingWindow window;
        m_cpu.upload(dst, src, count);
    }
    void upload_ints(int32_t* dst, const int32_t* src, size_t count) override {
        CountingWindow window;
        m_cpu.upload_ints(dst, src, count);
    }
    void download(float* dst, const float* src, size_t count) override {
        CountingWindow window;
        m_cpu.download(dst, src, count);
    }
    void fill(float* dst, float value, size_t count) override {
        CountingWindow window;
        m_cpu.fill(dst, value, count);
    }
    void copy(float* dst, const float* src, size_t count) override {
        CountingWindow window;
        m_cpu.copy(dst, src, count);
    }
    void embedding_forward(float* x, const int32_t* tokens, const float* wte, const float* wpe, int batch,
                           int seq, int d) override {
        CountingWindow window;
        m_cpu.embedding_forward(x, tokens, wte, wpe, batch, seq, d);
    }
    void embedding_backward(float* dwte, float* dwpe, const float* dx, const int32_t* tokens, int batch,
                            int seq, int d) override {
        CountingWindow window;
        m_cpu.embedding_backward(dwte, dwpe, dx, tokens, batch, seq, d);
    }
    void linear_forward(float* y, const float* x, const float* w, const float* b, int n, int in,
                        int out) override {
        CountingWindow window;
        m_cpu.linear_forward(y, x, w, b, n, in, out);
    }
    void linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x, const float* w,
                         int n, int in, int out, bool accumulate_dx) override {
        CountingWindow window;
        m_cpu.linear_backward(dx, dw, db, dy, x, w, n, in, out, accumulate_dx);
    }
    void norm_forward(NormType type, float* y, float* stats, const float* x, const float* w, const float* b,
                      ScaleRef alpha, int n, int d, float eps) override {
        CountingWindow window;
        m_cpu.norm_forward(type, y, stats, x, w, b, alpha, n, d, eps);
    }
    void norm_backward(NormType type, float* dx, float* dw, float* db, float* dalpha, const float* dy,
                       const float* x, const float* stats, const float* w, ScaleRef alpha, int n, int d,
                       bool accumulate_dx) override {
        CountingWindow window;
        m_cpu.norm_backward(type, dx, dw, db, dalpha, dy, x, stats, w, alpha, n, d, accumulate_dx);
    }
    void feature_norm_forward(NormType type, float* y, const float* x, const float* w, const float* b,
                              const FeatureNormState& state, FeatureStatistics mode, int n, int d) override {
        CountingWindow window;
        m_cpu.feature_norm_forward(type, y, x, w, b, state, mode, n, d);
    }
    void feature_norm_backward(NormType type, float* dx, float* dw, float* db, const float* dy,
                               const float* x, const float* w, const FeatureNormState& state,
                               FeatureStatistics mode, int n, int d, bool accumulate_dx) override {
        CountingWindow window;
        m_cpu.feature_norm_backward(type, dx, dw, db, dy, x, w, state, mode, n, d, accumulate_dx);
    }
    void frozen_norm_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                             const float* b, float rstd, int n, int d) override {
        CountingWindow window;
        m_cpu.frozen_norm_forward(type, y, stats, x, w, b, rstd, n, d);
    }
    void frozen_norm_backward(NormType type, float* dx, float* dw, float* db, const float* dy, const float* x,
                              const float* stats, const float* w, int n, int d, bool accumulate_dx) override {
        CountingWindow window;
        m_cpu.frozen_norm_backward(type, dx, dw, db, dy, x, stats, w, n, d, accumulate_dx);
    }
    void attention_forward(float* out, float* probs, const AttentionInputs& in, const AttentionShape& shape,
                           AttentionStatsRef stats) override {
        CountingWindow window;
        m_cpu.attention_forward(out, probs, in, shape, stats);
    }
    void attention_backward(const AttentionGrads& grads, const float* dout, const AttentionInputs& in,
                            const float* probs, const AttentionShape& shape) override {
        CountingWindow window;
        m_cpu.attention_backward(grads, dout, in, probs, shape);
    }
    void activation_forward(Activation kind, float* y, const float* x, size_t count) override {
        CountingWindow window;
        m_cpu.activation_forward(kind, y, x, count);
    }
    void activation_backward(Activation kind, float* dx, const float* dy, const float* x,
                             size_t count) override {
        CountingWindow window;
        m_cpu.activation_backward(kind, dx, dy, x, count);
    }
    void gated_forward(FeedForward kind, float* h, const float* gate, const float* up,
                       size_t count) override {
        CountingWindow window;
        m_cpu.gated_forward(kind, h, gate, up, count);
    }
    void gated_backward(FeedForward kind, float* dgate, float* dup, const float* dh, const float* gate,
                        const float* up, size_t count) override {
        CountingWindow window;
        m_cpu.gated_backward(kind, dgate, dup, dh, gate, up, count);
    }
    void repeat_heads(float* dst, const float* src, int stride, HeadGroups heads) override {
        CountingWindow window;
        m_cpu.repeat_heads(dst, src, stride, heads);
    }
    void sum_head_groups(float* dst, int stride, const float* src, HeadGroups heads) override {
        CountingWindow window;
        m_cpu.sum_head_groups(dst, stride, src, heads);
    }
    void rope(float* x, int stride, int rows, int seq, int heads, int head_dim, float theta,
              bool inverse) override {
        CountingWindow window;
        m_cpu.rope(x, stride, rows, seq, heads, head_dim, theta, inverse);
    }
    void depth_softmax_forward(float* p, const float* logits, int sources, int n) override {
        CountingWindow window;
        m_cpu.depth_softmax_forward(p, logits, sources, n);
    }
    void depth_softmax_backward(float* dlogits, const float* dp, const float* p, int sources,
                                int n) override {
        CountingWindow window;
        m_cpu.depth_softmax_backward(dlogits, dp, p, sources, n);
    }
    void depth_mix_forward(float* h, const float* p, const float* v, int sources, int n, int d) override {
        CountingWindow window;
        m_cpu.depth_mix_forward(h, p, v, sources, n, d);
    }
    void depth_mix_backward(float* dv, float* dp, const float* dh, const float* p, const float* v,
                            int sources, int n, int d) override {
        CountingWindow window;
        m_cpu.depth_mix_backward(dv, dp, dh, p, v, sources, n, d);
    }
    void residual_forward(float* s, const float* x, const float* f, ScaleRef c, ScaleRef a,
                          size_t count) override {
        CountingWindow window;
        m_cpu.residual_forward(s, x, f, c, a, count);
    }
    void residual_backward(float* dx, float* df, float* dc, float* da, const float* ds, const float* x,
                           const float* f, ScaleRef c, ScaleRef a, size_t count) override {
        CountingWindow window;
        m_cpu.residual_backward(dx, df, dc, da, ds, x, f, c, a, count);
    }
    CrossEntropyResult cross_entropy(float* dlogits, const float* logits, const int32_t* targets, int n,
                                     int vocab, bool want_gradient, float z_loss) override {
        CountingWindow window;
        return m_cpu.cross_entropy(dlogits, logits, targets, n, vocab, want_gradient, z_loss);
    }
    void sum_squares(const float* base, const std::vector<Slice>& slices, double* out) override {
        CountingWindow window;
        m_cpu.sum_squares(base, slices, out);
    }
    void sum_values(const float* base, const std::vector<Slice>& slices, double* out) override {
        CountingWindow window;
        m_cpu.sum_values(base, slices, out);
    }
    void count_below(const float* base, const std::vector<Slice>& slices, float threshold,
                     double* out) override {
        CountingWindow window;
        m_cpu.count_below(base, slices, threshold, out);
    }
    void optimizer_update(const OptimizerStep& step, float* param, const float* grad, float* m, float* v,
                          float* update, size_t count) override {
        CountingWindow window;
        m_cpu.optimizer_update(step, param, grad, m, v, update, count);
    }
    void scale(float* x, float factor, size_t count) override {
        CountingWindow window;
        m_cpu.scale(x, factor, count);
    }
    void add(float* dst, const float* src, size_t count) override {
        CountingWindow window;
        m_cpu.add(dst, src, count);
    }
    void round_to_format(float* dst, const float* src, size_t count, FormatLimits format,
                         float* tally) override {
        CountingWindow window;
        m_cpu.round_to_format(dst, src, count, format, tally);
    }

  private:
    CpuBackend m_cpu;
};

Config small_config(const char* norm_type) {
    Config config;
    for (const char* assignment :
         {"data.task=copy", "data.symbols=63", "model.d_model=64", "model.layers=3", "model.heads=4",
          "model.d_ff=256", "model.seq_len=32", "model.activation=gelu", "train.batch_size=16"}) {
        apply_override(config, assignment);
    }
    apply_override(config, std::string("model.norm_type=") + norm_type);
    return config;
}

// A training step's backend work (forward, backward with attention statistics, every gradient
// reduction the trainer makes, the optimizer update) allocates nothing once warmed up, on 1 and 2 threads.
void expect_backend_ops_allocate_nothing(const Config& config) {
    for (const int threads : {1, 2}) {
        CountingBackend backend(threads);
        const auto task = make_task(config.data, config.model.seq_len, config.train.seed);
        Model model(config.model, task->vocab_size(), backend);
        model.initialize(config.train.seed);
        Optimizer optimizer(model);
        std::vector<Slice> slices;
        for (const auto& entry : model.layout().entries) slices.push_back({entry.offset, entry.count});
        std::vector<double> sums(slices.size());
        Batch batch;
        auto step = [&](int t) {
            task->make_batch(Split::Train, static_cast<uint64_t>(t), config.train.batch_size,
                             config.model.seq_len, batch);
            model.forward_backward(batch, {.backward = true, .attention_stats = true});
            backend.sum_squares(model.grads(), slices, sums.data());
            optimizer.update(config.train, t, 1e-3, 1.0);
            backend.sum_squares(optimizer.last_update(), slices, sums.data());
            backend.sum_squares(model.params(), slices, sums.data());
        };
        for (int t = 1; t <= 3; ++t) step(t);
        g_allocations = 0;
        for (int t = 4; t <= 13; ++t) step(t);
        EXPECT_EQ(g_allocations.load(), 0)
            << threads << " thread(s): allocations inside backend ops over 10 steps";
    }
}

// Attention Residuals' ops (the depth softmax and mix, the one-column score product) allocate nothing.
TEST(SteadyStateArchitecture, AttentionResidualsOpsAllocateNothing) {
    Config config = small_config("rmsnorm");
    apply_override(config, "model.residual=attn_res");
    expect_backend_ops_allocate_nothing(config);
}

class SteadyState : public ::testing::TestWithParam<const char*> {};

TEST_P(SteadyState, BackendOpsAllocateNothing) {
    expect_backend_ops_allocate_nothing(small_config(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Norms, SteadyState,
                         ::testing::Values("layernorm", "rmsnorm", "dyt", "batchnorm", "powernorm"));

// The same for a Llama-shaped model: its gated FFN, RoPE and tied head allocate nothing either.
TEST(SteadyStateArchitecture, LlamaShapedOpsAllocateNothing) {
    Config config = small_config("rmsnorm");
    for (const char* assignment : {"model.ffn=swiglu", "model.position=rope", "model.bias=false",
                                   "model.tie_embeddings=true", "model.kv_heads=2"})
        apply_override(config, assignment);
    expect_backend_ops_allocate_nothing(config);
}

struct StepCase {
    const char* name;
    std::vector<std::string> overrides;
};

std::ostream& operator<<(std::ostream& out, const StepCase& c) {
    return out << c.name;
}

class WholeStep : public ::testing::TestWithParam<StepCase> {};

// Whole Trainer::step calls allocate nothing once warmed up: every step measures the per-layer
// telemetry (or every 4th, so logged and unlogged steps alternate), validation runs inside some
// steps (in one config for the first time after the warm-up), and the data task builds a batch
// each step. Four warm-up steps take the one-off allocations (activations, backend workspaces).
// On 1 and 2 engine threads: with 2, which pool thread first runs a product of a given shape depends
// on scheduling, so this also checks that the GEMM's per-thread packing buffers are warm on every thread.
TEST_P(WholeStep, AllocatesNothingAfterWarmUp) {
    for (const int threads : {1, 2}) {
        Config config = small_config("layernorm");
        config.train.steps = 100;
        config.threads = threads;
        for (const std::string& assignment : GetParam().overrides) apply_override(config, assignment);
        Trainer trainer(config);
        for (int i = 0; i < 4; ++i) trainer.step();
        g_allocations = 0;
        g_counting = true;
        for (int i = 0; i < 12; ++i) trainer.step();
        g_counting = false;
        const long allocations = g_allocations.load();
        RecordProperty("allocations_over_12_steps_" + std::to_string(threads) + "_threads",
                       std::to_string(allocations));
        EXPECT_EQ(allocations, 0) << GetParam().name << ", " << threads
                                  << " thread(s): heap allocations over 12 whole Trainer::step calls";
        EXPECT_EQ(trainer.steps_done(), 16);
        EXPECT_EQ(trainer.status(), RunStatus::Running);
        EXPECT_TRUE(std::isfinite(trainer.last_loss()));
    }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, WholeStep,
    ::testing::Values(
        StepCase{"PreLN_telemetry_every_step", {"model.norm_placement=pre", "telemetry.val_every=0"}},
        StepCase{"PostLN_telemetry_every_step", {"model.norm_placement=post", "telemetry.val_every=0"}},
        StepCase{"PreLN_telemetry_every_4_validation_every_3",
                 {"model.norm_placement=pre", "telemetry.every=4", "telemetry.val_every=3",
                  "telemetry.val_batches=2"}},
        StepCase{"PostLN_validation_every_2", {"model.norm_placement=post", "telemetry.val_every=2"}},
        StepCase{"PreLN_denseformer_encoder_decoder",
                 {"model.norm_placement=pre", "model.residual=denseformer", "model.encoder_layers=2",
                  "model.denseformer_dilation=2", "telemetry.val_every=3"}},
        StepCase{"PostLN_resi_dual_encoder_decoder",
                 {"model.norm_placement=post", "model.residual=resi_dual", "model.encoder_layers=1"}},
        StepCase{"PostLN_b2t", {"model.norm_placement=post", "model.residual=b2t"}},
        StepCase{"PreLN_lns", {"model.norm_placement=pre", "model.residual=lns"}},
        StepCase{"PeriLN_attn_res_validation_every_3",
                 {"model.norm_placement=peri", "model.residual=attn_res", "telemetry.val_every=3"}},
        StepCase{"PeriLN_dyt_rezero",
                 {"model.norm_placement=peri", "model.norm_type=dyt", "model.residual=rezero",
                  "telemetry.val_every=5"}},
        StepCase{"PreBatchNorm_validation_every_3",
                 {"model.norm_placement=pre", "model.norm_type=batchnorm", "telemetry.val_every=3"}},
        StepCase{"PostPowerNorm_encoder_decoder",
                 {"model.norm_placement=post", "model.norm_type=powernorm", "model.encoder_layers=1",
                  "telemetry.val_every=2"}},
        StepCase{"PostLN_admin_clipped_text",
                 {"data.task=text", "model.norm_placement=post", "model.residual=admin",
                  "train.clip_grad_norm=0.5", "telemetry.val_every=3"}},
        StepCase{"PreLN_modadd_sgd",
                 {"data.task=modadd", "data.modulus=31", "train.optimizer=sgd", "telemetry.val_every=4"}},
        StepCase{"PostLN_encoder_decoder_validation_every_3",
                 {"model.norm_placement=post", "model.encoder_layers=2", "telemetry.val_every=3"}},
        StepCase{"PeriLN_encoder_decoder_admin_text",
                 {"data.task=text", "model.norm_placement=peri", "model.encoder_layers=1",
                  "model.residual=admin", "telemetry.every=2", "telemetry.val_every=0"}},
        StepCase{"LlamaLike_rope_swiglu_tied_no_bias_qk_norm",
                 {"data.task=text", "model.norm_type=rmsnorm", "model.ffn=swiglu", "model.position=rope",
                  "model.bias=false", "model.tie_embeddings=true", "model.qk_norm=rmsnorm",
                  "model.kv_heads=1", "train.optimizer=adamw", "telemetry.val_every=3"}},
        StepCase{"PostLN_geglu_no_positions",
                 {"model.norm_placement=post", "model.ffn=geglu", "model.position=none",
                  "telemetry.val_every=4"}}),
    [](const ::testing::TestParamInfo<StepCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace normlab
