// Live changes to a running trainer, posted from any thread and applied between two steps.
// A change is "key=value" on one of the live config keys, or the action reinit_deepnorm_beta;
// device and threads move the run onto a new backend (Trainer::switch_backend).
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace normlab {

struct Config;

struct LiveChange {
    std::string key;       // a live config key (see live_keys()) or "reinit_deepnorm_beta"
    std::string value;     // as in --set: JSON or a bare word
    int64_t at_step = -1;  // apply before this step (1-based); -1: before the next step
    bool operator==(const LiveChange&) const = default;
};

// The config keys a running trainer accepts without a restart.
const std::vector<std::string>& live_keys();

// Whether `key` is one of live_keys().
bool is_live_key(const std::string& key);

// Throws InputError "'KEY' cannot change during a run; live keys are: ..." unless `key` is live.
void require_live_key(const std::string& key);

// Parses "KEY=VALUE" or "STEP:KEY=VALUE" (as given to `normlab-cli train --change`). Throws InputError.
LiveChange parse_live_change(const std::string& text);

// Checks changes planned before a run starts (--change), in the order they will apply: each value
// is valid on the config the earlier changes leave, no step lies beyond `last_step`, and the
// reinit_deepnorm_beta action meets a DeepNorm run. Throws InputError naming the change, so a run
// never trains to its end only to log a rejected change.
void validate_planned_changes(const Config& start, int64_t first_step, int64_t last_step,
                              const std::vector<LiveChange>& changes);

// A mutex-protected queue: the GUI thread posts, the engine thread takes what is due.
class LiveChangeQueue {
  public:
    void post(LiveChange change);
    // Removes and returns, in posting order, the commands due before step `step`.
    std::vector<LiveChange> take_due(int64_t step);
    bool empty() const;

  private:
    mutable std::mutex m_mutex;
    std::vector<LiveChange> m_pending;
};

}  // namespace normlab
