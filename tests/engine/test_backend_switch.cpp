// Moving a live run to another backend: Trainer::switch_backend carries parameters, gradients,
// optimizer moments, learnable scalars (ReZero, DyT), the step count, the schedule and the data
// position, so N steps + switch + M steps match N + M unswitched steps; the live keys device and
// threads switch between two steps, and an impossible device is a rejected change that touches nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <set>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"
#include "engine/train/trainer.h"
#include "tests/engine/model_test_support.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {

constexpr int kBefore = 12;  // steps before the switch
constexpr int kAfter = 13;   // steps after it

// Every kind of state a switch must carry: Adam moments, a warmup still ramping at the switch,
// ReZero's a_l and DyT's alpha (learnable scalars), validation on the way, data drawn by step index.
Config switch_config() {
    Config config = testing::small_model_config(16, 2, 16, 4, kBefore + kAfter);
    config.model.norm_type = NormType::DyT;
    config.model.residual = Residual::ReZero;
    config.train.lr = 3e-3;
    config.train.warmup_steps = 20;
    config.telemetry.val_every = 5;
    config.threads = 2;
    return config;
}

// Host copies of every role buffer (parameters, gradients, both moments, the last update).
struct RunState {
    std::vector<float> params, grads, first, second, update;
};

std::vector<float> host_copy(Trainer& trainer, const float* buffer) {
    std::vector<float> host(trainer.model().layout().total);
    trainer.backend().download(host.data(), buffer, host.size());
    return host;
}

RunState state_of(Trainer& trainer) {
    Optimizer& optimizer = trainer.optimizer();
    return {host_copy(trainer, trainer.model().params()), host_copy(trainer, trainer.model().grads()),
            host_copy(trainer, optimizer.first_moment()), host_copy(trainer, optimizer.second_moment()),
            host_copy(trainer, optimizer.last_update())};
}

double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
    double worst = 0.0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i)
        worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
    return a.size() == b.size() ? worst : INFINITY;
}

std::vector<StepRecord> records(Trainer& trainer, int steps) {
    std::vector<StepRecord> out;
    for (int i = 0; i < steps && !trainer.finished(); ++i) out.push_back(trainer.step().record);
    return out;
}

// The value of one learnable scalar entry (e.g. blocks.1.rezero_alpha) on whatever backend holds it.
float scalar(Trainer& trainer, const std::string& name) {
    const int entry = trainer.model().layout().find(name);
    EXPECT_GE(entry, 0) << name;
    return trainer.model().read_entry(entry).at(0);
}

bool cuda_answers() {
    try {
        make_backend("cuda", 1, nullptr);
        return true;
    } catch (const ResourceError&) {
        return false;
    }
}

// Runs `before` steps, switches to `next` (when given), then runs the rest; returns every record.
std::vector<StepRecord> curve_with_switch(Trainer& trainer, std::unique_ptr<Backend> next) {
    auto curve = records(trainer, kBefore);
    if (next) trainer.switch_backend(std::move(next), "cpu: test switch");
    const auto tail = records(trainer, kAfter);
    curve.insert(curve.end(), tail.begin(), tail.end());
    return curve;
}

void expect_same_curve(const std::vector<StepRecord>& got, const std::vector<StepRecord>& expected) {
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].loss, expected[i].loss) << "step " << i + 1;
        EXPECT_EQ(got[i].lr, expected[i].lr) << "step " << i + 1;
        EXPECT_EQ(got[i].grad_norm, expected[i].grad_norm) << "step " << i + 1;
        EXPECT_EQ(got[i].val_loss, expected[i].val_loss) << "step " << i + 1;
    }
}

// A backend that records the buffers it holds, in a set that outlives it; optionally its allocation
// number `fail_at` (0-based) fails as memory exhaustion would.
class TrackingBackend final : public CpuReferenceBackend {
  public:
    using Live = std::set<const void*>;
    TrackingBackend(int threads, std::shared_ptr<Live> live, int fail_at = -1)
        : CpuReferenceBackend(threads), m_live(live), m_fail_at(fail_at) {}
    float* allocate(size_t count) override {
        if (m_allocations++ == m_fail_at) throw ResourceError("test: out of device memory");
        return note(CpuReferenceBackend::allocate(count));
    }
    int32_t* allocate_ints(size_t count) override { return note(CpuReferenceBackend::allocate_ints(count)); }
    void release(void* pointer) override {
        if (pointer) {
            EXPECT_EQ(m_live->erase(pointer), 1u) << "released a buffer this backend does not hold";
        }
        CpuReferenceBackend::release(pointer);
    }

  private:
    template <class T>
    T* note(T* pointer) {
        m_live->insert(pointer);
        return pointer;
    }
    std::shared_ptr<Live> m_live;
    int m_fail_at;
    int m_allocations = 0;
};

// Every buffer leaves the old backend: after a second switch the first tracking backend holds
// nothing (a buffer left behind would still be listed), and the new one holds every role buffer.
TEST(BackendSwitch, EveryBufferMovesAndTheOldBackendKeepsNone) {
    Trainer trainer(switch_config());
    auto first_live = std::make_shared<TrackingBackend::Live>();
    auto second_live = std::make_shared<TrackingBackend::Live>();
    records(trainer, 3);
    trainer.switch_backend(std::make_unique<TrackingBackend>(2, first_live), "first");
    // parameters, gradients, attention statistics, the norm gains' warmup copies, the feature norms'
    // state, activations, tokens, targets, 2 moments, update
    EXPECT_EQ(first_live->size(), 11u);
    records(trainer, 3);
    trainer.switch_backend(std::make_unique<TrackingBackend>(1, second_live), "second");
    EXPECT_TRUE(first_live->empty()) << first_live->size() << " buffer(s) left on the old backend";
    EXPECT_EQ(second_live->size(), 11u);
    Optimizer& optimizer = trainer.optimizer();
    for (const void* buffer : {static_cast<const void*>(trainer.model().params()),
                               static_cast<const void*>(trainer.model().grads()),
                               static_cast<const void*>(optimizer.first_moment()),
                               static_cast<const void*>(optimizer.second_moment()),
                               static_cast<const void*>(optimizer.last_update())}) {
        EXPECT_EQ(second_live->count(buffer), 1u) << "a role buffer is not on the new backend";
    }
    EXPECT_EQ(records(trainer, 3).size(), 3u);
}

// A target that runs out of memory part-way (the 4th of its buffers): the switch throws, the copies
// already made are released, and the run goes on on its old backend exactly as if never asked.
TEST(BackendSwitch, FailedSwitchReleasesItsCopiesAndLeavesTheRunUntouched) {
    Trainer plain(switch_config());
    Trainer trainer(switch_config());
    const auto reference = records(plain, 8);
    auto before = records(trainer, 4);
    const float* params = trainer.model().params();
    auto live = std::make_shared<TrackingBackend::Live>();
    EXPECT_THROW(trainer.switch_backend(std::make_unique<TrackingBackend>(1, live, 3), "failing"),
                 ResourceError);
    EXPECT_TRUE(live->empty()) << live->size() << " copies left on the failed target";
    EXPECT_EQ(trainer.model().params(), params);
    EXPECT_EQ(trainer.backend().threads(), 2);
    EXPECT_NE(trainer.device_reason(), "failing");
    const auto after = records(trainer, 4);
    before.insert(before.end(), after.begin(), after.end());
    expect_same_curve(before, reference);
}

TEST(BackendSwitch, CopiesEveryBufferAndCounterExactly) {
    Trainer trainer(switch_config());
    records(trainer, kBefore);
    const RunState before = state_of(trainer);
    const float* old_params = trainer.model().params();
    const double lr_before = trainer.current_lr();
    const float alpha_before = scalar(trainer, "blocks.1.rezero_alpha");
    const float dyt_before = scalar(trainer, "blocks.0.norm1.alpha");
    ASSERT_NE(alpha_before, 0.0f) << "ReZero's a_l has moved away from its init";
    ASSERT_NE(dyt_before, 0.5f) << "DyT's alpha has moved away from its init";

    trainer.switch_backend(std::make_unique<CpuBackend>(1), "cpu: test switch");

    EXPECT_EQ(trainer.backend().threads(), 1);
    EXPECT_EQ(trainer.device_reason(), "cpu: test switch");
    EXPECT_NE(trainer.model().params(), old_params) << "the parameters live in the new backend's memory";
    const RunState after = state_of(trainer);
    EXPECT_EQ(after.params, before.params);
    EXPECT_EQ(after.grads, before.grads);
    EXPECT_EQ(after.first, before.first);
    EXPECT_EQ(after.second, before.second);
    EXPECT_EQ(after.update, before.update);
    EXPECT_EQ(scalar(trainer, "blocks.1.rezero_alpha"), alpha_before);
    EXPECT_EQ(scalar(trainer, "blocks.0.norm1.alpha"), dyt_before);
    EXPECT_EQ(trainer.steps_done(), kBefore);
    EXPECT_EQ(trainer.current_lr(), lr_before);
    EXPECT_DOUBLE_EQ(lr_before, 3e-3 * (kBefore + 1) / 20.0) << "the warmup is mid-ramp at the switch";
}

// A switch to a twin of the backend in use (same kind, same threads) must change nothing at all: the
// continued run is the unswitched run bit for bit, so nothing was lost or reset in the move.
TEST(BackendSwitch, SwitchToATwinBackendContinuesTheRunBitForBit) {
    Trainer straight(switch_config());
    const auto reference = curve_with_switch(straight, nullptr);
    Trainer switched(switch_config());
    const auto curve = curve_with_switch(switched, std::make_unique<CpuBackend>(2));

    expect_same_curve(curve, reference);
    const RunState a = state_of(switched);
    const RunState b = state_of(straight);
    EXPECT_EQ(a.params, b.params);
    EXPECT_EQ(a.grads, b.grads);
    EXPECT_EQ(a.first, b.first);
    EXPECT_EQ(a.second, b.second);
    EXPECT_EQ(a.update, b.update);
    EXPECT_EQ(switched.status(), RunStatus::Completed);
}

// 2 threads -> 1 thread: the fast ops cut reductions into 4 chunks per thread and add the partials in
// chunk order, so 1 thread groups the same sums differently and the run moves by float rounding
// (observed: losses within 1e-12 here and 3e-9 relative in the CLI test, parameters within 2e-7). The exact
// oracle is the same move made through a checkpoint resumed with threads=1, which must agree bit for bit.
TEST(BackendSwitch, TwoThreadsToOneMatchesAResumeOnOneThread) {
    Trainer straight(switch_config());
    const auto reference = curve_with_switch(straight, nullptr);

    Trainer switched(switch_config());
    const auto curve = curve_with_switch(switched, std::make_unique<CpuBackend>(1));
    EXPECT_EQ(switched.backend().threads(), 1);

    Trainer first_part(switch_config());
    auto resumed_curve = records(first_part, kBefore);
    const testing::TestFolder folder;
    const std::string path = folder / "switch.safetensors";
    save_checkpoint(first_part, path);
    auto resumed = load_checkpoint(path, {"threads=1"});
    const auto tail = records(*resumed, kAfter);
    resumed_curve.insert(resumed_curve.end(), tail.begin(), tail.end());
    expect_same_curve(curve, resumed_curve);
    EXPECT_EQ(state_of(switched).params, state_of(*resumed).params);
    EXPECT_EQ(state_of(switched).first, state_of(*resumed).first);

    ASSERT_EQ(curve.size(), reference.size());
    for (size_t i = 0; i < curve.size(); ++i) {
        if (i < kBefore) {
            EXPECT_EQ(curve[i].loss, reference[i].loss) << "step " << i + 1;
        }
        EXPECT_NEAR(curve[i].loss, reference[i].loss, 1e-6 * reference[i].loss) << "step " << i + 1;
    }
    EXPECT_LT(max_abs_difference(state_of(switched).params, state_of(straight).params), 1e-6);
}

// Fast CPU backend -> the readable reference backend: the same maths with other summation orders, so
// the run agrees to float rounding (observed after 13 steps: losses within 1e-12, parameters within
// 3e-7; the tolerances are 1e-6), far below what the steps after the switch move (a run that lost its moments
// or schedule would be off by orders of magnitude more).
TEST(BackendSwitch, FastToReferenceBackendContinuesWithinRounding) {
    Trainer straight(switch_config());
    const auto reference = curve_with_switch(straight, nullptr);

    Trainer switched(switch_config());
    auto curve = records(switched, kBefore);
    const std::vector<float> params_at_switch = state_of(switched).params;
    switched.switch_backend(std::make_unique<CpuReferenceBackend>(2), "cpu: reference");
    const auto tail = records(switched, kAfter);
    curve.insert(curve.end(), tail.begin(), tail.end());

    ASSERT_EQ(curve.size(), reference.size());
    for (size_t i = 0; i < curve.size(); ++i) {
        if (i < kBefore) {
            EXPECT_EQ(curve[i].loss, reference[i].loss) << "step " << i + 1;
        } else {
            EXPECT_NEAR(curve[i].loss, reference[i].loss, 1e-6 * reference[i].loss) << "step " << i + 1;
        }
        EXPECT_EQ(curve[i].lr, reference[i].lr) << "step " << i + 1;
    }
    const RunState a = state_of(switched);
    const RunState b = state_of(straight);
    const double drift = max_abs_difference(a.params, b.params);
    const double moved = max_abs_difference(b.params, params_at_switch);
    EXPECT_LT(drift, 1e-6) << "final parameters, switched vs unswitched";
    EXPECT_GT(moved, 1000 * drift) << "the steps after the switch moved the parameters far more";
    EXPECT_LT(max_abs_difference(a.first, b.first), 1e-6);
}

TEST(BackendSwitch, LiveThreadsChangeSwitchesBetweenSteps) {
    Trainer plain(switch_config());
    Trainer changed(switch_config());
    changed.post({"threads", "1", 6});
    for (int step = 1; step <= 10; ++step) {
        const StepRecord expected = plain.step().record;
        const StepOutcome& got = changed.step();
        if (step < 6) {
            EXPECT_EQ(got.record.loss, expected.loss) << "step " << step;
        }
        // from step 6 on 1 thread: the same run up to float rounding (see TwoThreadsToOne...)
        EXPECT_NEAR(got.record.loss, expected.loss, 1e-6 * expected.loss) << "step " << step;
        EXPECT_EQ(changed.backend().threads(), step < 6 ? 2 : 1) << "step " << step;
        if (step != 6) {
            EXPECT_TRUE(got.events.empty()) << "step " << step;
            continue;
        }
        ASSERT_EQ(got.events.size(), 1u);
        const Event& event = got.events[0];
        EXPECT_EQ(event.step, 6);
        EXPECT_EQ(event.kind, "change");
        EXPECT_EQ(event.key, "threads");
        EXPECT_EQ(event.value, "1");
        EXPECT_EQ(event.message,
                  "threads = 1: now on " + changed.backend().name() + " (" + changed.device_reason() + ")");
        EXPECT_EQ(changed.device_reason().rfind("cpu: ", 0), 0u) << changed.device_reason();
        EXPECT_NE(event.message.find("1 thread)"), std::string::npos) << event.message;
    }
    EXPECT_EQ(changed.config().threads, 1);
    EXPECT_EQ(changed.config().device, "auto");
    EXPECT_LT(max_abs_difference(state_of(changed).params, state_of(plain).params), 1e-6);
}

TEST(BackendSwitch, LiveDeviceCpuIsRecordedWithTheBackendInUse) {
    Trainer trainer(switch_config());
    records(trainer, 2);
    const Event event = trainer.apply({"device", "cpu", -1});
    EXPECT_EQ(event.kind, "change");
    EXPECT_EQ(event.key, "device");
    EXPECT_EQ(event.step, 3);
    EXPECT_EQ(event.message, "device = cpu: now on " + trainer.backend().name() + " (cpu: asked for)");
    EXPECT_EQ(trainer.config().device, "cpu");
    EXPECT_EQ(trainer.device_reason(), "cpu: asked for");
    EXPECT_EQ(trainer.backend().device(), "cpu");
    EXPECT_EQ(records(trainer, 3).size(), 3u);
}

// device=cuda without a GPU: make_backend refuses before anything moves; the change is a
// rejected_change event naming the reason, and the run goes on exactly as if it had not been asked.
TEST(BackendSwitch, ImpossibleCudaSwitchIsRejectedAndTheRunUntouched) {
    if (cuda_answers()) GTEST_SKIP() << "a GPU answers here: device=cuda is possible";
    Trainer plain(switch_config());
    Trainer asked(switch_config());
    const std::string backend_name = asked.backend().name();
    asked.post({"device", "cuda", 6});
    for (int step = 1; step <= kBefore + kAfter; ++step) {
        const StepRecord expected = plain.step().record;
        const StepOutcome& got = asked.step();
        EXPECT_EQ(got.record.loss, expected.loss) << "step " << step;
        EXPECT_EQ(got.record.val_loss, expected.val_loss) << "step " << step;
        if (step != 6) continue;
        ASSERT_EQ(got.events.size(), 1u);
        const Event& event = got.events[0];
        EXPECT_EQ(event.kind, "rejected_change");
        EXPECT_EQ(event.step, 6);
        EXPECT_EQ(event.key, "device");
        EXPECT_EQ(event.value, "cuda");
        EXPECT_NE(event.message.find("device=cuda was asked for"), std::string::npos) << event.message;
    }
    EXPECT_EQ(asked.backend().name(), backend_name);
    EXPECT_EQ(asked.config().device, "auto");
    EXPECT_EQ(asked.status(), RunStatus::Completed);
    EXPECT_EQ(state_of(asked).params, state_of(plain).params);
    EXPECT_THROW(asked.apply({"device", "cuda", -1}), ResourceError) << "apply() reports it to its caller";
    EXPECT_EQ(asked.backend().name(), backend_name);
}

TEST(BackendSwitch, BadThreadsValueIsRejected) {
    Trainer trainer(switch_config());
    trainer.post({"threads", "-2", -1});
    const StepOutcome& outcome = trainer.step();
    ASSERT_EQ(outcome.events.size(), 1u);
    EXPECT_EQ(outcome.events[0].kind, "rejected_change");
    EXPECT_NE(outcome.events[0].message.find("threads must be an integer"), std::string::npos)
        << outcome.events[0].message;
    EXPECT_EQ(trainer.backend().threads(), 2);
}

}  // namespace
}  // namespace normlab
