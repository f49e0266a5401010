// The backend self-check (engine/selfcheck/selftest.h) on the CPU: the fast backend passes; a "wrong twin"
// (the fast backend with exactly one op's output off by 1%) is refused and the report names what
// differed; the verdict cache round-trips, misses for another GPU, driver or build, and a cached failure
// refuses without running the check again.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/parity.h"
#include "engine/selfcheck/gpu_selftest.h"
#include "engine/selfcheck/selftest.h"
#include "engine/selfcheck/selftest_cache.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;

// The one op a WrongTwin gets wrong.
enum class WrongOp {
    NormForward,
    FeatureNormForward,
    LinearWeightGradient,
    AttentionForward,
    ActivationBackward,
    CrossEntropyGradient,
    SumOfSquares,
    OptimizerUpdate
};

// The fast CPU backend with one op's output scaled by 1.01; counts the ops it runs.
class WrongTwin final : public Backend {
  public:
    explicit WrongTwin(WrongOp wrong) : m_inner(1), m_wrong(wrong) {}

    int ops() const { return m_ops; }

    std::string name() const override { return "wrong twin of " + m_inner.name(); }
    std::string device() const override { return m_inner.device(); }
    int threads() const override { return m_inner.threads(); }

    float* allocate(size_t count) override { return m_inner.allocate(count); }
    int32_t* allocate_ints(size_t count) override { return m_inner.allocate_ints(count); }
    void release(void* pointer) override { m_inner.release(pointer); }
    void upload(float* dst, const float* src, size_t count) override { m_inner.upload(dst, src, count); }
    void upload_ints(int32_t* dst, const int32_t* src, size_t count) override {
        m_inner.upload_ints(dst, src, count);
    }
    void download(float* dst, const float* src, size_t count) override { m_inner.download(dst, src, count); }
    void fill(float* dst, float value, size_t count) override { m_inner.fill(dst, value, count); }
    void copy(float* dst, const float* src, size_t count) override { m_inner.copy(dst, src, count); }

    void embedding_forward(float* x, const int32_t* tokens, const float* wte, const float* wpe, int batch,
                           int seq, int d) override {
        ++m_ops;
        m_inner.embedding_forward(x, tokens, wte, wpe, batch, seq, d);
    }
    void embedding_backward(float* dwte, float* dwpe, const float* dx, const int32_t* tokens, int batch,
                            int seq, int d) override {
        ++m_ops;
        m_inner.embedding_backward(dwte, dwpe, dx, tokens, batch, seq, d);
    }
    void linear_forward(float* y, const float* x, const float* w, const float* b, int n, int in,
                        int out) override {
        ++m_ops;
        m_inner.linear_forward(y, x, w, b, n, in, out);
    }
    void linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x, const float* w,
                         int n, int in, int out, bool accumulate_dx) override {
        ++m_ops;
        m_inner.linear_backward(dx, dw, db, dy, x, w, n, in, out, accumulate_dx);
        spoil(WrongOp::LinearWeightGradient, dw, static_cast<size_t>(out) * in);
    }
    void norm_forward(NormType type, float* y, float* stats, const float* x, const float* w, const float* b,
                      ScaleRef alpha, int n, int d, float eps) override {
        ++m_ops;
        m_inner.norm_forward(type, y, stats, x, w, b, alpha, n, d, eps);
        spoil(WrongOp::NormForward, y, static_cast<size_t>(n) * d);
    }
    void norm_backward(NormType type, float* dx, float* dw, float* db, float* dalpha, const float* dy,
                       const float* x, const float* stats, const float* w, ScaleRef alpha, int n, int d,
                       bool accumulate_dx) override {
        ++m_ops;
        m_inner.norm_backward(type, dx, dw, db, dalpha, dy, x, stats, w, alpha, n, d, accumulate_dx);
    }
    void frozen_norm_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                             const float* b, float rstd, int n, int d) override {
        ++m_ops;
        m_inner.frozen_norm_forward(type, y, stats, x, w, b, rstd, n, d);
    }
    void frozen_norm_backward(NormType type, float* dx, float* dw, float* db, const float* dy, const float* x,
                              const float* stats, const float* w, int n, int d, bool accumulate_dx) override {
        ++m_ops;
        m_inner.frozen_norm_backward(type, dx, dw, db, dy, x, stats, w, n, d, accumulate_dx);
    }
    void feature_norm_forward(NormType type, float* y, const float* x, const float* w, const float* b,
                              const FeatureNormState& state, FeatureStatistics mode, int n, int d) override {
        ++m_ops;
        m_inner.feature_norm_forward(type, y, x, w, b, state, mode, n, d);
        spoil(WrongOp::FeatureNormForward, y, static_cast<size_t>(n) * d);
    }
    void feature_norm_backward(NormType type, float* dx, float* dw, float* db, const float* dy,
                               const float* x, const float* w, const FeatureNormState& state,
                               FeatureStatistics mode, int n, int d, bool accumulate_dx) override {
        ++m_ops;
        m_inner.feature_norm_backward(type, dx, dw, db, dy, x, w, state, mode, n, d, accumulate_dx);
    }
    using Backend::attention_backward;
    using Backend::attention_forward;
    void attention_forward(float* out, float* probs, const AttentionInputs& in, const AttentionShape& shape,
                           AttentionStatsRef stats) override {
        ++m_ops;
        m_inner.attention_forward(out, probs, in, shape, stats);
        spoil(WrongOp::AttentionForward, out,
              static_cast<size_t>(shape.batch) * shape.seq * shape.heads * shape.head_dim);
    }
    void attention_backward(const AttentionGrads& grads, const float* dout, const AttentionInputs& in,
                            const float* probs, const AttentionShape& shape) override {
        ++m_ops;
        m_inner.attention_backward(grads, dout, in, probs, shape);
    }
    void activation_forward(Activation kind, float* y, const float* x, size_t count) override {
        ++m_ops;
        m_inner.activation_forward(kind, y, x, count);
    }
    void activation_backward(Activation kind, float* dx, const float* dy, const float* x,
                             size_t count) override {
        ++m_ops;
        m_inner.activation_backward(kind, dx, dy, x, count);
        spoil(WrongOp::ActivationBackward, dx, count);
    }
    void gated_forward(FeedForward kind, float* h, const float* gate, const float* up,
                       size_t count) override {
        ++m_ops;
        m_inner.gated_forward(kind, h, gate, up, count);
    }
    void gated_backward(FeedForward kind, float* dgate, float* dup, const float* dh, const float* gate,
                        const float* up, size_t count) override {
        ++m_ops;
        m_inner.gated_backward(kind, dgate, dup, dh, gate, up, count);
    }
    void repeat_heads(float* dst, const float* src, int stride, HeadGroups heads) override {
        ++m_ops;
        m_inner.repeat_heads(dst, src, stride, heads);
    }
    void sum_head_groups(float* dst, int stride, const float* src, HeadGroups heads) override {
        ++m_ops;
        m_inner.sum_head_groups(dst, stride, src, heads);
    }
    void rope(float* x, int stride, int rows, int seq, int heads, int head_dim, float theta,
              bool inverse) override {
        ++m_ops;
        m_inner.rope(x, stride, rows, seq, heads, head_dim, theta, inverse);
    }
    void depth_softmax_forward(float* p, const float* logits, int sources, int n) override {
        ++m_ops;
        m_inner.depth_softmax_forward(p, logits, sources, n);
    }
    void depth_softmax_backward(float* dlogits, const float* dp, const float* p, int sources,
                                int n) override {
        ++m_ops;
        m_inner.depth_softmax_backward(dlogits, dp, p, sources, n);
    }
    void depth_mix_forward(float* h, const float* p, const float* v, int sources, int n, int d) override {
        ++m_ops;
        m_inner.depth_mix_forward(h, p, v, sources, n, d);
    }
    void depth_mix_backward(float* dv, float* dp, const float* dh, const float* p, const float* v,
                            int sources, int n, int d) override {
        ++m_ops;
        m_inner.depth_mix_backward(dv, dp, dh, p, v, sources, n, d);
    }
    void residual_forward(float* s, const float* x, const float* f, ScaleRef c, ScaleRef a,
                          size_t count) override {
        ++m_ops;
        m_inner.residual_forward(s, x, f, c, a, count);
    }
    void residual_backward(float* dx, float* df, float* dc, float* da, const float* ds, const float* x,
                           const float* f, ScaleRef c, ScaleRef a, size_t count) override {
        ++m_ops;
        m_inner.residual_backward(dx, df, dc, da, ds, x, f, c, a, count);
    }
    CrossEntropyResult cross_entropy(float* dlogits, const float* logits, const int32_t* targets, int n,
                                     int vocab, bool want_gradient, float z_loss) override {
        ++m_ops;
        const CrossEntropyResult result =
            m_inner.cross_entropy(dlogits, logits, targets, n, vocab, want_gradient, z_loss);
        if (want_gradient) spoil(WrongOp::CrossEntropyGradient, dlogits, static_cast<size_t>(n) * vocab);
        return result;
    }
    void sum_squares(const float* base, const std::vector<Slice>& slices, double* host_out) override {
        ++m_ops;
        m_inner.sum_squares(base, slices, host_out);
        if (m_wrong != WrongOp::SumOfSquares) return;
        for (size_t s = 0; s < slices.size(); ++s) host_out[s] *= 1.01;
    }
    void sum_values(const float* base, const std::vector<Slice>& slices, double* host_out) override {
        ++m_ops;
        m_inner.sum_values(base, slices, host_out);
    }
    void count_below(const float* base, const std::vector<Slice>& slices, float threshold,
                     double* host_out) override {
        ++m_ops;
        m_inner.count_below(base, slices, threshold, host_out);
    }
    // param += 1.01 update, the update kept as 1.01 update.
    void optimizer_update(const OptimizerStep& step, float* param, const float* grad, float* m, float* v,
                          float* update, size_t count) override {
        ++m_ops;
        m_inner.optimizer_update(step, param, grad, m, v, update, count);
        if (m_wrong != WrongOp::OptimizerUpdate) return;
        m_inner.scale(update, 0.01f, count);
        m_inner.add(param, update, count);
        m_inner.scale(update, 101.0f, count);
    }
    void scale(float* x, float factor, size_t count) override { m_inner.scale(x, factor, count); }
    void add(float* dst, const float* src, size_t count) override { m_inner.add(dst, src, count); }
    void round_to_format(float* dst, const float* src, size_t count, FormatLimits format,
                         float* tally) override {
        m_inner.round_to_format(dst, src, count, format, tally);
    }

  private:
    void spoil(WrongOp op, float* values, size_t count) {
        if (op == m_wrong && values) m_inner.scale(values, 1.01f, count);
    }

    CpuBackend m_inner;
    WrongOp m_wrong;
    int m_ops = 0;
};

struct WrongTwinCase {
    std::string name;
    WrongOp op;
    std::string quantity;    // the report's row that must fail
    std::string difference;  // what the first difference names
};

void PrintTo(const WrongTwinCase& twin, std::ostream* out) {
    *out << twin.name;
}

TEST(SelfTest, TheFastCpuBackendPasses) {
    CpuBackend fast(2);
    const SelfTestReport report = run_backend_selftest(fast);
    EXPECT_TRUE(report.passed()) << report.first_difference;
    EXPECT_EQ(report.candidate, fast.name());
    ASSERT_EQ(report.checks.size(), 35u);  // 7 tiny models x loss, telemetry, gradients, updates, parameters
    for (const SelfTestCheck& check : report.checks) {
        EXPECT_TRUE(check.passed()) << check.model << " " << check.quantity << ": " << check.worst.describe();
        EXPECT_GT(check.compared, 0) << check.model << " " << check.quantity;
    }
}

class WrongTwinTest : public ::testing::TestWithParam<WrongTwinCase> {};

TEST_P(WrongTwinTest, IsRefusedAndTheReportNamesWhatDiffered) {
    WrongTwin twin(GetParam().op);
    const SelfTestReport report = run_backend_selftest(twin);
    ASSERT_FALSE(report.passed());
    EXPECT_NE(report.first_difference.find(GetParam().difference), std::string::npos)
        << report.first_difference;
    EXPECT_NE(report.first_difference.find("relative (tolerance 1.0e-04)"), std::string::npos)
        << report.first_difference;
    bool row_failed = false;
    for (const SelfTestCheck& check : report.checks) {
        if (check.quantity == GetParam().quantity && !check.passed()) row_failed = true;
    }
    EXPECT_TRUE(row_failed) << "no " << GetParam().quantity
                            << " check failed; first: " << report.first_difference;
}

INSTANTIATE_TEST_SUITE_P(
    OneOpOffByOnePercent, WrongTwinTest,
    ::testing::Values(
        WrongTwinCase{"NormForward", WrongOp::NormForward, "loss", "loss off by"},
        WrongTwinCase{"FeatureNormForward", WrongOp::FeatureNormForward, "loss", "loss off by"},
        WrongTwinCase{"LinearWeightGradient", WrongOp::LinearWeightGradient, "gradients",
                      ".weight gradient off by"},
        WrongTwinCase{"AttentionForward", WrongOp::AttentionForward, "loss", "loss off by"},
        WrongTwinCase{"ActivationBackward", WrongOp::ActivationBackward, "gradients", "gradient off by"},
        WrongTwinCase{"CrossEntropyGradient", WrongOp::CrossEntropyGradient, "gradients", "gradient off by"},
        WrongTwinCase{"SumOfSquares", WrongOp::SumOfSquares, "telemetry", "resid off by"},
        WrongTwinCase{"OptimizerUpdate", WrongOp::OptimizerUpdate, "updates", " update off by"}),
    [](const ::testing::TestParamInfo<WrongTwinCase>& info) { return info.param.name; });

TEST(SelfTest, ComparisonsNameTheWorstElementAndFailOnNonFiniteValues) {
    const ParityCheck close = compare_tensors("w", {1.0f, 2.00001f}, {1.0f, 2.0f});
    EXPECT_TRUE(close.passed()) << close.describe();
    const ParityCheck off = compare_tensors("w gradient", {1.0f, 2.0f, 4.04f}, {1.0f, 2.0f, 4.0f});
    EXPECT_FALSE(off.passed());
    EXPECT_EQ(off.index, 2u);
    EXPECT_EQ(
        off.describe().rfind("w gradient off by 1.0e-02 relative (tolerance 1.0e-04): element 2 is 4.04", 0),
        0u)
        << off.describe();
    EXPECT_FALSE(compare_tensors("nan", {std::nanf("")}, {1.0f}).passed());
    EXPECT_FALSE(compare_values("sizes", {1.0}, {1.0, 2.0}).passed());
    EXPECT_TRUE(compare_values("near zero", {1e-6}, {0.0}).passed());  // floor 1: absolute near 0
    EXPECT_FALSE(compare_values("sum", {1.01e-6}, {1e-6}, kParityTolerance, 1e-30).passed());
}

class SelfTestCacheTest : public ::testing::Test {
  protected:
    const GpuIdentity m_gpu{"NVIDIA H100 80GB HBM3 (sm_90, 80 GiB)", "550.54.15, CUDA 12.4",
                            "0.1.0 (commit abc)"};
    const testing::TestFolder m_folder;
    const std::string m_path = m_folder / "normlab/gpu_selftest.json";
};

TEST_F(SelfTestCacheTest, VerdictsRoundTripAndAnotherGpuDriverOrBuildMisses) {
    EXPECT_FALSE(read_cached_verdict(m_path, m_gpu).has_value());  // no file yet
    const SelfTestVerdict failed{false, "wte gradient off by 1.0e-02 relative", "2026-11-23T10:00:00Z"};
    write_cached_verdict(m_path, m_gpu, failed);  // creates the folder
    std::optional<SelfTestVerdict> read = read_cached_verdict(m_path, m_gpu);
    ASSERT_TRUE(read.has_value());
    EXPECT_FALSE(read->passed);
    EXPECT_EQ(read->reason, failed.reason);
    EXPECT_EQ(read->checked_at, failed.checked_at);

    GpuIdentity other_driver = m_gpu, other_build = m_gpu, other_gpu = m_gpu;
    other_driver.driver = "555.42.02, CUDA 12.5";
    other_build.build = "0.1.0 (commit def)";
    other_gpu.gpu = "NVIDIA A100-SXM4-80GB (sm_80, 80 GiB)";
    for (const GpuIdentity& other : {other_driver, other_build, other_gpu}) {
        EXPECT_FALSE(read_cached_verdict(m_path, other).has_value()) << other.gpu << " / " << other.driver;
    }

    write_cached_verdict(m_path, other_driver, {true, "", "2026-11-23T11:00:00Z"});
    write_cached_verdict(m_path, m_gpu, {true, "", "2026-11-23T12:00:00Z"});  // replaces the failure
    read = read_cached_verdict(m_path, m_gpu);
    ASSERT_TRUE(read.has_value());
    EXPECT_TRUE(read->passed);
    EXPECT_TRUE(read_cached_verdict(m_path, other_driver).value_or(SelfTestVerdict{}).passed);
}

TEST_F(SelfTestCacheTest, AnUnreadableCacheIsAMiss) {
    fs::create_directories(fs::path(m_path).parent_path());
    std::ofstream(m_path) << "{\"format\": \"normlab-gpu-selftest-1\", \"verdicts\": [{\"gpu\": ";
    EXPECT_FALSE(read_cached_verdict(m_path, m_gpu).has_value());
    write_cached_verdict(m_path, m_gpu, {true, "", "now"});  // and is replaced by the next verdict
    EXPECT_TRUE(read_cached_verdict(m_path, m_gpu).has_value());
}

TEST_F(SelfTestCacheTest, FirstUseRunsTheCheckOnceAndACachedFailureRefusesWithoutRunningIt) {
    int runs = 0;
    const auto failing_check = [&runs] {
        ++runs;
        SelfTestReport report;
        report.first_difference = "loss off by 1.0e-02 relative (tolerance 1.0e-04)";
        return report;
    };
    bool cached = true;
    SelfTestVerdict verdict = first_use_verdict(m_path, m_gpu, failing_check, &cached);
    EXPECT_EQ(runs, 1);
    EXPECT_FALSE(cached);
    EXPECT_FALSE(verdict.passed);
    verdict = first_use_verdict(m_path, m_gpu, failing_check, &cached);
    EXPECT_EQ(runs, 1) << "a cached verdict must not run the check again";
    EXPECT_TRUE(cached);
    EXPECT_FALSE(verdict.passed);
    EXPECT_EQ(verdict.reason, "loss off by 1.0e-02 relative (tolerance 1.0e-04)");
}

TEST_F(SelfTestCacheTest, AWrongGpuIsRefusedOnFirstUseThenFromTheCache) {
    WrongTwin twin(WrongOp::LinearWeightGradient);
    const std::string refusal = gpu_selftest_refusal(twin, m_gpu, m_path);
    EXPECT_EQ(refusal.rfind(
                  "the GPU (" + m_gpu.gpu + ") failed NormLab's self-check against the CPU reference: ", 0),
              0u)
        << refusal;
    EXPECT_NE(refusal.find(".weight gradient off by"), std::string::npos) << refusal;
    EXPECT_NE(refusal.find("normlab-cli selftest --device cuda"), std::string::npos) << refusal;
    EXPECT_EQ(refusal.find("cached in"), std::string::npos) << refusal;

    const int ops = twin.ops();
    EXPECT_GT(ops, 0);
    const std::string again = gpu_selftest_refusal(twin, m_gpu, m_path);
    EXPECT_EQ(twin.ops(), ops) << "the cached failure must refuse without running the check";
    EXPECT_NE(again.find(".weight gradient off by"), std::string::npos) << again;
    EXPECT_NE(again.find("cached in " + m_path), std::string::npos) << again;
}

TEST_F(SelfTestCacheTest, AGoodGpuPassesAndIsCached) {
    CpuBackend fast(1);
    EXPECT_EQ(gpu_selftest_refusal(fast, m_gpu, m_path), "");
    const std::optional<SelfTestVerdict> verdict = read_cached_verdict(m_path, m_gpu);
    ASSERT_TRUE(verdict.has_value());
    EXPECT_TRUE(verdict->passed);
    EXPECT_EQ(verdict->reason, "");
}

// Sets an environment variable for one scope, restoring what was there.
class ScopedEnvironment {
  public:
    ScopedEnvironment(const char* name, const char* value) : m_name(name) {
        if (const char* old = std::getenv(name)) m_old = old;
        if (value) {
            setenv(name, value, 1);
        } else {
            unsetenv(name);
        }
    }
    ~ScopedEnvironment() {
        if (m_old) {
            setenv(m_name, m_old->c_str(), 1);
        } else {
            unsetenv(m_name);
        }
    }

  private:
    const char* m_name;
    std::optional<std::string> m_old;
};

TEST(SelfTestCachePath, XdgCacheHomeThenHomeDotCache) {
    {
        ScopedEnvironment xdg("XDG_CACHE_HOME", "/tmp/xdg");
        EXPECT_EQ(default_selftest_cache_path(), "/tmp/xdg/normlab/gpu_selftest.json");
    }
    ScopedEnvironment home("HOME", "/home/user");
    {
        ScopedEnvironment relative("XDG_CACHE_HOME", "relative/cache");  // ignored, as the spec says
        EXPECT_EQ(default_selftest_cache_path(), "/home/user/.cache/normlab/gpu_selftest.json");
    }
    ScopedEnvironment no_xdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(default_selftest_cache_path(), "/home/user/.cache/normlab/gpu_selftest.json");
    ScopedEnvironment no_home("HOME", nullptr);
    EXPECT_EQ(default_selftest_cache_path(), "");
}

TEST(SelfTestIdentity, DriverTextNamesTheKernelModuleAndTheCudaVersion) {
    EXPECT_EQ(
        gpu_driver_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC "
                        "2024\nGCC version:  gcc version 12.2.0\n",
                        12040),
        "550.54.15, CUDA 12.4");
    EXPECT_EQ(gpu_driver_text("", 12020), "CUDA 12.2");
    EXPECT_NE(selftest_build_text().find("(commit "), std::string::npos);
}

}  // namespace
}  // namespace normlab
