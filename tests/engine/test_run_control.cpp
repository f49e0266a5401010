// RunControl across threads: a training loop on a second thread stops on request within one step, and
// live changes posted from another thread arrive at their step.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine/train/run_control.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {

using namespace std::chrono_literals;

Config small_run() {
    Config config = testing::small_model_config(16, 1, 8, 2, 1000000);
    config.telemetry.val_every = 0;
    config.threads = 1;
    return config;
}

// Waits up to two seconds for a condition set by the other thread.
template <class Predicate>
bool eventually(Predicate predicate) {
    for (int i = 0; i < 2000; ++i) {
        if (predicate()) return true;
        std::this_thread::sleep_for(1ms);
    }
    return predicate();
}

TEST(RunControl, StopFromAnotherThreadAnswersWithinOneStep) {
    Trainer trainer(small_run());
    RunControl control;
    std::atomic<int64_t> steps{0};
    RunStatus final_status = RunStatus::Running;
    std::thread engine([&] {
        final_status =
            run_training(trainer, control, [&](const StepOutcome& outcome) { steps = outcome.record.step; });
    });
    ASSERT_TRUE(eventually([&] { return steps.load() > 20; }));
    // Stop first, then read the count: at most the step already under way may still finish. (Reading
    // first would let the engine take any number of steps before stop() if this thread is preempted.)
    control.stop();
    const int64_t at_stop = steps.load();
    engine.join();
    EXPECT_LE(steps.load(), at_stop + 1) << "stop answers within one step";
    EXPECT_EQ(final_status, RunStatus::Stopped);
    EXPECT_EQ(trainer.status(), RunStatus::Stopped);
}

TEST(RunControl, StopBeforeTheFirstStepTakesNone) {
    Trainer trainer(small_run());
    RunControl control;
    control.stop();
    EXPECT_EQ(run_training(trainer, control, nullptr), RunStatus::Stopped);
    EXPECT_EQ(trainer.steps_done(), 0);
}

// Holds the loop inside step 1's callback until the test thread has posted its change from there.
class StepOneGate {
  public:
    void wait_at(const StepOutcome& outcome) {
        if (outcome.record.step == 1) {
            EXPECT_TRUE(eventually([this] { return m_open.load(); }));
        }
    }
    void open() { m_open.store(true); }

  private:
    std::atomic<bool> m_open{false};
};

TEST(RunControl, LiveChangesPostedFromAnotherThreadArrive) {
    Config config = small_run();
    config.train.steps = 40;
    Trainer trainer(config);
    RunControl control;
    StepOneGate gate;
    std::vector<Event> events;
    std::thread engine([&] {
        run_training(trainer, control, [&](const StepOutcome& outcome) {
            events.insert(events.end(), outcome.events.begin(), outcome.events.end());
            gate.wait_at(outcome);
        });
    });
    trainer.post({"model.norm_type", "rmsnorm", 10});
    gate.open();
    engine.join();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].step, 10);
    EXPECT_EQ(trainer.config().model.norm_type, NormType::RmsNorm);
    EXPECT_EQ(trainer.status(), RunStatus::Completed);
}

// The GUI's path for a device change: posted from another thread while the loop runs on 2 threads,
// applied between steps 9 and 10, and the loop carries on to the end on the new backend.
TEST(RunControl, LiveThreadsChangeFromAnotherThreadSwitchesTheBackend) {
    Config config = small_run();
    config.train.steps = 30;
    config.threads = 2;
    Trainer trainer(config);
    RunControl control;
    StepOneGate gate;
    std::vector<Event> events;
    std::vector<int> threads_per_step;
    std::thread engine([&] {
        run_training(trainer, control, [&](const StepOutcome& outcome) {
            events.insert(events.end(), outcome.events.begin(), outcome.events.end());
            threads_per_step.push_back(trainer.backend().threads());
            gate.wait_at(outcome);
        });
    });
    trainer.post({"threads", "1", 10});
    gate.open();
    engine.join();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].step, 10);
    EXPECT_EQ(events[0].kind, "change");
    EXPECT_EQ(events[0].key, "threads");
    ASSERT_EQ(threads_per_step.size(), 30u);
    EXPECT_EQ(threads_per_step[8], 2) << "step 9";
    EXPECT_EQ(threads_per_step[9], 1) << "step 10";
    EXPECT_EQ(trainer.config().threads, 1);
    EXPECT_EQ(trainer.status(), RunStatus::Completed);
}

}  // namespace
}  // namespace normlab
