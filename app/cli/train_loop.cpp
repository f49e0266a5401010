// train_into_folder: run_training with a callback that appends each step's record and events, saves the
// periodic checkpoint when due, prints progress, and refreshes summary.json and the caller's heartbeat
// every few seconds (and after each checkpoint).
#include "app/cli/train_loop.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "engine/core/unix_time.h"
#include "engine/io/records_json.h"
#include "engine/train/run_control.h"

namespace normlab::cli {

namespace {
// The run the signal handler stops; atomic (and lock-free, so async-signal-safe) because the handler
// may run at any moment, and reset by SignalScope before the RunControl it points to goes away.
std::atomic<RunControl*> g_control{nullptr};
static_assert(std::atomic<RunControl*>::is_always_lock_free);

void on_interrupt(int) {
    if (RunControl* control = g_control.load()) control->stop();
}

// Routes SIGINT / SIGTERM to `control` for its lifetime, on every exit path (exceptions included).
class SignalScope {
  public:
    explicit SignalScope(RunControl& control) {
        g_control.store(&control);
        std::signal(SIGINT, on_interrupt);
        std::signal(SIGTERM, on_interrupt);
    }
    ~SignalScope() {
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
        g_control.store(nullptr);
    }
    SignalScope(const SignalScope&) = delete;
    SignalScope& operator=(const SignalScope&) = delete;
};

// Records a run that ended with an error: an event and summary.json with status "failed" and the
// message. Best effort: when the run folder itself is what failed, the original error is what matters.
void record_failure(RunFolder& folder, const Trainer& trainer, nlohmann::json summary,
                    const std::string& message) {
    try {
        folder.append_event({trainer.steps_done(), "failed", message, "", "", -1});
    } catch (const std::exception&) {
    }
    try {
        summary["status"] = "failed";
        summary["error"] = message;
        folder.write_summary(summary);
    } catch (const std::exception&) {
    }
}
}  // namespace

nlohmann::json train_into_folder(Trainer& trainer, RunFolder& folder, int64_t first_step,
                                 const TrainLoopOptions& options, PeriodicCheckpoint& checkpoints) {
    RunControl control;
    const SignalScope signals(control);
    using Clock = std::chrono::steady_clock;
    const auto started = Clock::now();
    auto last_report = started, last_heartbeat = started;
    const auto elapsed = [&started] { return std::chrono::duration<double>(Clock::now() - started).count(); };
    const auto current_summary = [&] {
        nlohmann::json summary = summary_json(trainer, elapsed(), first_step);
        checkpoints.annotate(summary);
        return summary;
    };
    try {
        run_training(trainer, control, [&](const StepOutcome& outcome) {
            // Every step's scalars (and val_loss when validation ran); per-layer telemetry only on the
            // steps that measured it (telemetry.every).
            folder.append_metrics(outcome.record);
            for (const Event& event : outcome.events) {
                folder.append_event(event);
                if (!options.quiet) std::cerr << "  [step " << event.step << "] " << event.message << "\n";
            }
            const bool saved = checkpoints.after_step(trainer);
            const auto now = Clock::now();
            if (!options.quiet && std::chrono::duration<double>(now - last_report).count() > 2.0) {
                last_report = now;
                std::fprintf(stderr, "  step %lld/%d  loss %.4f  lr %.3g  grad %.3g  %.1f steps/s\n",
                             static_cast<long long>(outcome.record.step), trainer.config().train.steps,
                             outcome.record.loss, outcome.record.lr, outcome.record.grad_norm,
                             outcome.record.steps_per_s);
            }
            if (saved ||
                std::chrono::duration<double>(now - last_heartbeat).count() > options.heartbeat_seconds) {
                last_heartbeat = now;
                nlohmann::json summary = current_summary();
                summary["heartbeat"] = unix_seconds();
                folder.write_summary(summary);
                if (options.on_heartbeat) options.on_heartbeat();
            }
        });
        if (trainer.status() == RunStatus::Stopped)
            folder.append_event({trainer.steps_done(), "stopped", "stopped by signal", "", "", -1});
        nlohmann::json summary = current_summary();
        folder.write_summary(summary);
        return summary;
    } catch (const WriteFenceLost&) {
        throw;  // the folder is another worker's now: nothing more goes into it
    } catch (const std::exception& error) {
        record_failure(folder, trainer, current_summary(), error.what());
        throw;
    }
}

}  // namespace normlab::cli
