// Emulated mixed precision (docs/precision.md): the backends' rounding op against round_to_format and its
// tallies, a rounded linear layer against the same product done by hand, bf16 gradients against fp32's,
// fp16's gradient underflow and what a loss scale does to it, the loss scaler's state machine
// (GradScaler's rules), and a trainer with a loss scale: exact unscaling, skipped steps as events, a
// checkpoint that keeps the scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/config/loss_scale_spec.h"
#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"
#include "engine/model/matmul_precision.h"
#include "engine/train/loss_scaler.h"
#include "engine/train/trainer.h"
#include "tests/engine/model_test_support.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Values across fp16's range and beyond it: normals, subnormals, ties, overflow, zeros, inf and NaN.
std::vector<float> awkward_values(size_t count) {
    std::vector<float> values = testing::random_tensor(count, 7, 1.0);
    for (size_t i = 0; i < values.size(); ++i) values[i] *= std::ldexp(1.0f, static_cast<int>(i % 61) - 30);
    values[0] = 0.0f;
    values[1] = -kInf;
    values[2] = std::nanf("");
    values[3] = 65520.0f;               // overflows fp16
    values[4] = std::ldexp(1.0f, -25);  // underflows fp16 to zero
    return values;
}

TEST(RoundToFormatOp, BothCpuBackendsRoundAsTheReferenceRoutineAndTallyTheSame) {
    const std::vector<float> values = awkward_values(100000);
    CpuReferenceBackend reference(2);
    CpuBackend fast(2);
    for (NumberFormat format : {NumberFormat::Bf16, NumberFormat::Fp16, NumberFormat::Fp8E4M3}) {
        double overflowed = 0.0, underflowed = 0.0;
        float max_abs = 0.0f;
        for (float x : values) {
            const RoundedValue r = round_with(format_limits(format), x);
            overflowed += r.overflowed;
            underflowed += r.underflowed;
            if (std::isfinite(x)) max_abs = std::max(max_abs, std::fabs(x));
        }
        if (format != NumberFormat::Bf16) {  // bf16 has float32's exponent range: nothing here leaves it
            EXPECT_GT(overflowed, 0.0);
            EXPECT_GT(underflowed, 0.0);
        }
        for (Backend* backend : std::initializer_list<Backend*>{&reference, &fast}) {
            std::vector<float> rounded(values.size());
            float tally[3] = {0.0f, 0.0f, 0.5f};
            backend->round_to_format(rounded.data(), values.data(), values.size(), format_limits(format),
                                     tally);
            for (size_t i = 0; i < values.size(); ++i) {
                const float expected = round_to_format(values[i], format);
                if (std::isnan(expected)) {
                    EXPECT_TRUE(std::isnan(rounded[i]));
                } else {
                    ASSERT_EQ(rounded[i], expected) << backend->name() << " value " << values[i];
                }
            }
            EXPECT_EQ(tally[0], overflowed) << backend->name();
            EXPECT_EQ(tally[1], underflowed) << backend->name();
            EXPECT_EQ(tally[2], max_abs) << backend->name();
            std::vector<float> in_place = values;  // rounded where it lies: the same values and tally
            float in_place_tally[3] = {0.0f, 0.0f, 0.0f};
            backend->round_to_format(in_place.data(), in_place.data(), values.size(), format_limits(format),
                                     in_place_tally);
            EXPECT_EQ(std::memcmp(in_place.data(), rounded.data(), values.size() * sizeof(float)), 0);
            EXPECT_EQ(in_place_tally[2], max_abs) << "the largest |x| is the input's";
            float measured[3] = {1.0f, 2.0f, 0.0f};  // a null dst measures only, adding to what is there
            backend->round_to_format(nullptr, values.data(), values.size(), format_limits(format), measured);
            EXPECT_EQ(measured[0], 1.0f + overflowed);
            EXPECT_EQ(measured[1], 2.0f + underflowed);
        }
    }
}

TEST(RoundToFormatOp, FlagsFollowTheFormatsLimits) {
    const FormatLimits fp16 = format_limits(NumberFormat::Fp16);
    EXPECT_TRUE(round_with(fp16, 65520.0f).overflowed);
    EXPECT_FALSE(round_with(fp16, 65519.0f).overflowed);
    EXPECT_FALSE(round_with(fp16, kInf).overflowed);  // already infinite: not this rounding's doing
    EXPECT_TRUE(round_with(fp16, std::ldexp(1.0f, -15)).underflowed);   // an fp16 subnormal
    EXPECT_FALSE(round_with(fp16, std::ldexp(1.0f, -14)).underflowed);  // its smallest normal
    EXPECT_FALSE(round_with(fp16, 0.0f).underflowed);
    const FormatLimits fp8 = format_limits(NumberFormat::Fp8E4M3);
    EXPECT_TRUE(round_with(fp8, 470.0f).overflowed);  // saturates at 448, and counts
    EXPECT_EQ(round_with(fp8, 470.0f).value, 448.0f);
    const RoundedValue float_subnormal = round_with(format_limits(NumberFormat::Fp32), 1e-40f);
    EXPECT_EQ(float_subnormal.value, 1e-40f);  // fp32 rounds nothing, and its subnormals count as such
    EXPECT_TRUE(float_subnormal.underflowed);
}

// y = round(round(x) round(W)^T + b) for a 3 x 4 input and 2 outputs, by hand in double.
TEST(MatmulPrecision, ALinearLayerRoundsItsOperandsAndOutput) {
    CpuBackend backend(1);
    const int n = 3, in = 4, out = 2;
    const std::vector<float> x = testing::random_tensor(n * in, 11, 1.0);
    const std::vector<float> w = testing::random_tensor(out * in, 12, 1.0);
    const std::vector<float> b = {0.25f, -0.5f};
    MatmulPrecision matmuls(backend);
    matmuls.set_format(NumberFormat::Bf16);
    matmuls.begin_pass(1);
    std::vector<float> y(n * out);
    matmuls.forward(y.data(), x.data(), w.data(), b.data(), n, in, out);
    for (int r = 0; r < n; ++r) {
        for (int o = 0; o < out; ++o) {
            double sum = b[o];
            for (int i = 0; i < in; ++i)
                sum += static_cast<double>(round_to_format(x[r * in + i], NumberFormat::Bf16)) *
                       round_to_format(w[o * in + i], NumberFormat::Bf16);
            const float expected = round_to_format(static_cast<float>(sum), NumberFormat::Bf16);
            EXPECT_NEAR(y[r * out + o], expected, std::fabs(expected) * 0.0079 + 1e-6) << r << "," << o;
            EXPECT_EQ(y[r * out + o], round_to_format(y[r * out + o], NumberFormat::Bf16)) << "not in bf16";
        }
    }
    const auto tallies = matmuls.read_tallies();
    ASSERT_EQ(tallies.size(), 1u);
    EXPECT_EQ(tallies[0].activations, n * in + n * out);
    EXPECT_EQ(tallies[0].activation_overflows, 0.0);
}

// Gradients of one pass in `format` (loss scale `scale`), and the model's per-block precision stats.
struct PassResult {
    std::vector<float> grads;
    std::vector<double> grad_underflow;
};

PassResult gradients_in(NumberFormat format, float scale, float logit_scale = 1.0f) {
    CpuBackend backend(2);
    const ModelConfig config = testing::tiny_model_config(2);
    Model model(config, 32, backend);
    model.initialize(3);
    testing::perturb_parameters(model, 4);
    if (logit_scale != 1.0f) {  // a head that makes every gradient tiny
        auto head = model.read_entry(model.layout().head);
        for (float& v : head) v *= logit_scale;
        model.write_entry(model.layout().head, head);
    }
    model.set_precision(format);
    model.set_loss_scale(scale);
    const ForwardStats& stats = model.forward_backward(testing::small_batch(32, 4, 8, 5),
                                                       {.backward = true, .attention_stats = true});
    PassResult result{std::vector<float>(model.layout().total), stats.decoder.grad_underflow};
    backend.download(result.grads.data(), model.grads(), result.grads.size());
    for (float& g : result.grads) g /= scale;
    return result;
}

double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
    double diff = 0.0, norm = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
        diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
        norm += static_cast<double>(b[i]) * b[i];
    }
    return std::sqrt(diff / norm);
}

TEST(MatmulPrecision, Bf16GradientsStayWithinFivePercentOfFp32) {
    const PassResult fp32 = gradients_in(NumberFormat::Fp32, 1.0f);
    const PassResult bf16 = gradients_in(NumberFormat::Bf16, 1.0f);
    const PassResult fp16 = gradients_in(NumberFormat::Fp16, 1.0f);
    const double bf16_error = relative_difference(bf16.grads, fp32.grads);
    const double fp16_error = relative_difference(fp16.grads, fp32.grads);
    // bf16 keeps 8 significant bits (relative spacing 2^-8 = 0.4%), fp16 11 bits (0.05%).
    EXPECT_GT(bf16_error, 1e-4) << "bf16 rounding changed nothing";
    EXPECT_LT(bf16_error, 0.05);  // measured: 2.1%
    EXPECT_LT(fp16_error, bf16_error) << "fp16 keeps more mantissa bits than bf16";
    EXPECT_TRUE(fp32.grad_underflow.empty()) << "fp32 measures no precision statistics";
    ASSERT_EQ(bf16.grad_underflow.size(), 2u);
}

TEST(MatmulPrecision, Fp16GradientsUnderflowAndALossScaleLiftsThem) {
    // A head scaled by 1e-4 makes the loss's gradients ~1e-4 smaller: many fall below fp16's 2^-14.
    const PassResult unscaled = gradients_in(NumberFormat::Fp16, 1.0f, 1e-4f);
    const PassResult scaled = gradients_in(NumberFormat::Fp16, 4096.0f, 1e-4f);
    const PassResult exact = gradients_in(NumberFormat::Fp32, 1.0f, 1e-4f);
    ASSERT_EQ(unscaled.grad_underflow.size(), 2u);
    for (size_t b = 0; b < 2; ++b) {
        EXPECT_GT(unscaled.grad_underflow[b], 0.05) << "block " << b;
        EXPECT_LT(scaled.grad_underflow[b], unscaled.grad_underflow[b] / 4) << "block " << b;
    }
    EXPECT_LT(relative_difference(scaled.grads, exact.grads),
              relative_difference(unscaled.grads, exact.grads));
}

TEST(LossScaler, FollowsGradScalersRules) {
    LossScaler scaler;
    EXPECT_FALSE(scaler.active());
    EXPECT_EQ(scaler.scale(), 1.0);
    EXPECT_TRUE(scaler.after_backward(false)) << "without a dynamic scale nothing is skipped";
    scaler.follow(parse_loss_scale("dynamic"));
    EXPECT_EQ(scaler.scale(), 65536.0);
    EXPECT_FALSE(scaler.after_backward(false));
    EXPECT_EQ(scaler.scale(), 32768.0);
    EXPECT_FALSE(scaler.after_backward(false));
    EXPECT_EQ(scaler.scale(), 16384.0);
    EXPECT_EQ(scaler.skipped(), 2);
    EXPECT_EQ(scaler.skipped_in_a_row(), 2);
    for (int i = 0; i < kDynamicGrowthInterval - 1; ++i) ASSERT_TRUE(scaler.after_backward(true));
    EXPECT_EQ(scaler.scale(), 16384.0) << "grows only after 2000 finite steps in a row";
    EXPECT_EQ(scaler.skipped_in_a_row(), 0);
    EXPECT_TRUE(scaler.after_backward(true));
    EXPECT_EQ(scaler.scale(), 32768.0);
    scaler.follow(parse_loss_scale("dynamic"));
    EXPECT_EQ(scaler.scale(), 32768.0) << "the same setting keeps its state";
    scaler.follow(parse_loss_scale("1024"));
    EXPECT_EQ(scaler.scale(), 1024.0);
    EXPECT_TRUE(scaler.after_backward(false));
    EXPECT_EQ(scaler.scale(), 1024.0);
}

TEST(LossScaleSpec, AcceptsItsThreeFormsAndNamesThemOtherwise) {
    EXPECT_EQ(parse_loss_scale("none").kind, LossScaleSpec::Kind::None);
    EXPECT_EQ(parse_loss_scale("128").value, 128.0);
    EXPECT_EQ(parse_loss_scale("1e3").value, 1000.0);
    EXPECT_EQ(parse_loss_scale("dynamic:1e9").kind, LossScaleSpec::Kind::Dynamic);
    EXPECT_EQ(parse_loss_scale("dynamic:1e9").value, 1e9);
    for (const char* bad : {"", "0", "-8", "inf", "auto", "12x", "dynamic:", "dynamic:0", "1e31"}) {
        try {
            parse_loss_scale(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const InputError& error) {
            EXPECT_NE(std::string(error.what()).find("none, dynamic"), std::string::npos) << error.what();
        }
    }
    Config config;
    apply_override(config, "train.loss_scale=dynamic");
    apply_override(config, "train.precision=fp16");
    EXPECT_EQ(config.train.precision, NumberFormat::Fp16);
    EXPECT_THROW(apply_override(config, "train.precision=fp64"), InputError);
    config.train.precision = NumberFormat::Fp8E4M3;  // no infinity: a dynamic scale would never back off
    try {
        validate(config);
        ADD_FAILURE() << "fp8 with a dynamic loss scale was accepted";
    } catch (const InputError& error) {
        EXPECT_NE(std::string(error.what()).find("a fixed factor"), std::string::npos) << error.what();
    }
    config = config_from_json_text(R"({"train": {"loss_scale": 256}})", "test");
    EXPECT_EQ(config.train.loss_scale, "256");
    EXPECT_THROW(validate(config_from_json_text(R"({"train": {"loss_scale": "zero"}})", "test")), InputError);
}

Config precision_config(const char* precision, const char* loss_scale) {
    Config config = testing::small_model_config(16, 2, 16, 4, 12);
    config.train.lr = 3e-3;
    config.threads = 2;
    apply_override(config, std::string("train.precision=") + precision);
    apply_override(config, std::string("train.loss_scale=") + loss_scale);
    return config;
}

TEST(TrainerLossScale, AFixedPowerOfTwoScaleIsUndoneExactly) {
    Trainer plain(precision_config("fp32", "none"));
    Trainer scaled(precision_config("fp32", "1024"));
    for (int t = 1; t <= 12; ++t) {
        const StepRecord a = plain.step().record;
        const StepOutcome& outcome = scaled.step();
        ASSERT_EQ(outcome.record.loss, a.loss) << "step " << t;
        ASSERT_EQ(outcome.record.grad_norm, a.grad_norm) << "step " << t;
        ASSERT_TRUE(outcome.record.telemetry);
        EXPECT_EQ(outcome.record.telemetry->loss_scale, 1024.0);
        EXPECT_EQ(outcome.record.telemetry->skipped_steps, 0.0);
        EXPECT_FALSE(recorded(a.telemetry->loss_scale)) << "no loss scale: not recorded";
    }
}

TEST(TrainerLossScale, DynamicFp16SkipsOverflowingStepsAsEventsAndTrainsOn) {
    // From 2^30, the scaled gradients (the loss's are ~1/48 per position here) overflow fp16's 65504.
    Config config = precision_config("fp16", "dynamic:1073741824");
    config.train.lr = 1e-2;
    config.train.steps = 30;
    Trainer trainer(config);
    int skipped_events = 0;
    double last_scale = 0.0, last_skipped = 0.0;
    while (!trainer.finished()) {
        const StepOutcome& outcome = trainer.step();
        const bool skipped = std::any_of(outcome.events.begin(), outcome.events.end(),
                                         [](const Event& event) { return event.kind == "skipped_step"; });
        skipped_events += skipped;
        ASSERT_TRUE(outcome.record.telemetry);
        ASSERT_FALSE(outcome.record.layers.empty()) << "every step is logged, a skipped one too";
        EXPECT_GT(outcome.record.steps_per_s, 0.0);
        if (skipped) {  // the step that overflowed shows where, and made no update
            EXPECT_TRUE(recorded(outcome.record.layers[0].grad_overflow));
            EXPECT_EQ(outcome.record.layers[0].update_ratio, 0.0);
            EXPECT_FALSE(std::isfinite(outcome.record.grad_norm));
        }
        last_scale = outcome.record.telemetry->loss_scale;
        last_skipped = outcome.record.telemetry->skipped_steps;
        if (!outcome.record.layers.empty()) {
            EXPECT_TRUE(recorded(outcome.record.layers[0].grad_underflow));
            EXPECT_GE(outcome.record.layers[0].stream_headroom, 0.0);
        }
    }
    EXPECT_EQ(trainer.status(), RunStatus::Completed);
    EXPECT_EQ(static_cast<double>(skipped_events), last_skipped);
    // measured: 13 skips, the scale settling at 2^17
    EXPECT_GE(skipped_events, 5) << "2^30 must come down several halvings";
    EXPECT_LE(skipped_events, 20) << "then the steps train";
    EXPECT_EQ(last_scale * std::ldexp(1.0, static_cast<int>(last_skipped)), 1073741824.0)
        << "every skip halved the scale, and 30 steps are too few to grow it";
    EXPECT_TRUE(std::isfinite(trainer.last_loss()));
}

// A skipped step is no optimizer step (GradScaler does not call optimizer.step()): the first update
// after a run of skips is Adam's first, whose bias corrections make every moved parameter move by lr
// (m / sqrt(v) = g / |g|). Counting the skipped steps would shrink it (about lr / 2 after 13 skips).
TEST(TrainerLossScale, TheFirstUpdateAfterSkippedStepsIsAdamsFirst) {
    Config config = precision_config("fp16", "dynamic:1073741824");
    config.train.weight_decay = 0.0;
    config.train.steps = 30;
    Trainer trainer(config);
    Model& model = trainer.model();
    auto parameters = [&] {
        std::vector<float> all;
        for (size_t entry = 0; entry < model.layout().entries.size(); ++entry) {
            const std::vector<float> values = model.read_entry(static_cast<int>(entry));
            all.insert(all.end(), values.begin(), values.end());
        }
        return all;
    };
    for (int t = 1; t <= config.train.steps; ++t) {
        const std::vector<float> before = parameters();
        const StepOutcome& outcome = trainer.step();
        if (trainer.loss_scaler().skipped() == t) continue;  // every step so far skipped
        ASSERT_GT(t, 3) << "2^30 must overflow fp16 for a few steps first";
        const std::vector<float> after = parameters();
        double largest = 0.0;
        for (size_t i = 0; i < before.size(); ++i)
            largest = std::max(largest, std::abs(static_cast<double>(after[i]) - before[i]));
        EXPECT_NEAR(largest / outcome.record.lr, 1.0, 1e-2) << "after " << t - 1 << " skipped steps";
        return;
    }
    FAIL() << "every step was skipped";
}

TEST(TrainerLossScale, PassesAfterAStepAreUnscaledAndAdminProfilesInAnyPrecision) {
    // dump-grads and probes run passes on a trainer's model after its steps: unscaled.
    Trainer plain(precision_config("fp32", "none"));
    Trainer scaled(precision_config("fp32", "1024"));
    plain.step();
    scaled.step();
    const Batch batch = testing::small_batch(plain.task().vocab_size(), 4, 16, 9);
    plain.model().forward_backward(batch, {.backward = true});
    scaled.model().forward_backward(batch, {.backward = true});
    EXPECT_EQ(plain.model().read_entry(0, true), scaled.model().read_entry(0, true));
    // Admin's profiled omega runs sub-layers before any pass: in fp32 and emulated alike.
    for (const char* precision : {"fp32", "bf16"}) {
        Config config = precision_config(precision, "none");
        config.model.norm_placement = NormPlacement::Post;
        config.model.residual = Residual::Admin;
        config.model.admin_init = AdminInit::Profiled;
        Trainer trainer(config);
        EXPECT_TRUE(std::isfinite(trainer.step().record.loss)) << precision;
    }
}

TEST(TrainerLossScale, ACheckpointKeepsTheDynamicScaleAndTheResumeContinuesExactly) {
    Config config = precision_config("fp16", "dynamic:1073741824");
    config.train.steps = 30;
    Trainer straight(config);
    std::vector<double> reference;
    while (!straight.finished()) reference.push_back(straight.step().record.loss);
    Trainer first(config);
    for (int t = 0; t < 20; ++t) first.step();
    const testing::TestFolder folder;
    const std::string path = folder / "scale.safetensors";
    save_checkpoint(first, path);
    auto resumed = load_checkpoint(path, {});
    EXPECT_EQ(resumed->loss_scaler().scale(), first.loss_scaler().scale());
    EXPECT_EQ(resumed->loss_scaler().skipped(), first.loss_scaler().skipped());
    EXPECT_GT(resumed->loss_scaler().skipped(), 0) << "the scale came down before the checkpoint";
    for (size_t t = 20; t < reference.size(); ++t)
        EXPECT_EQ(resumed->step().record.loss, reference[t]) << "step " << t + 1;
}

TEST(TrainerLossScale, PrecisionAndLossScaleAreLiveKeys) {
    Trainer trainer(precision_config("fp32", "none"));
    trainer.step();
    trainer.post(parse_live_change("train.precision=bf16"));
    trainer.post(parse_live_change("train.loss_scale=64"));
    const StepOutcome& outcome = trainer.step();
    ASSERT_EQ(outcome.events.size(), 2u);
    EXPECT_EQ(outcome.events[0].kind, "change");
    EXPECT_EQ(outcome.record.telemetry->loss_scale, 64.0);
    ASSERT_FALSE(outcome.record.layers.empty());
    EXPECT_TRUE(recorded(outcome.record.layers[0].act_overflow)) << "bf16 from this step on";
}

}  // namespace
}  // namespace normlab
