// Live-change parsing and the thread-safe queue of them.
// The live-key check lives here so that --change and Trainer::apply reject the same keys the same way.
#include "engine/train/live_changes.h"

#include <algorithm>

#include "engine/config/config.h"
#include "engine/config/config_keys.h"
#include "engine/core/errors.h"

namespace normlab {

const std::vector<std::string>& live_keys() {
    static const std::vector<std::string> keys = {"train.lr",
                                                  "train.warmup_steps",
                                                  "train.schedule",
                                                  "train.clip_grad_norm",
                                                  "train.beta2",
                                                  "train.eps",
                                                  "train.weight_decay",
                                                  "train.weight_decay_mode",
                                                  "train.z_loss",
                                                  "train.precision",
                                                  "train.loss_scale",
                                                  "model.norm_placement",
                                                  "model.norm_type",
                                                  "model.residual",
                                                  "model.qk_norm",
                                                  "model.deepnorm_alpha",
                                                  "model.deepnorm_beta",
                                                  "telemetry.every",
                                                  "telemetry.val_every",
                                                  "device",
                                                  "threads",
                                                  "reinit_deepnorm_beta"};
    return keys;
}

bool is_live_key(const std::string& key) {
    const auto& keys = live_keys();
    return std::find(keys.begin(), keys.end(), key) != keys.end();
}

void require_live_key(const std::string& key) {
    if (is_live_key(key)) return;
    const auto& keys = live_keys();
    if (!find_key(key)) throw_unknown_key(key);  // a typo: "did you mean ..."
    std::string list;
    for (const auto& live : keys) list += (list.empty() ? "" : ", ") + live;
    throw InputError("'" + key + "' cannot change during a run; live keys are: " + list +
                     " (other keys need a new run)");
}

LiveChange parse_live_change(const std::string& text) {
    LiveChange change;
    std::string rest = text;
    const size_t colon = rest.find(':');
    const size_t equals = rest.find('=');
    if (colon != std::string::npos && (equals == std::string::npos || colon < equals)) {
        const std::string step_text = rest.substr(0, colon);
        try {
            size_t used = 0;
            change.at_step = std::stoll(step_text, &used);
            if (used != step_text.size() || change.at_step < 1) throw InputError("");
        } catch (const std::exception&) {
            throw InputError("live change '" + text + "': '" + step_text +
                             "' is not a step number >= 1; use STEP:KEY=VALUE, e.g. 200:train.lr=1e-4");
        }
        rest = rest.substr(colon + 1);
    }
    const size_t eq = rest.find('=');
    change.key = rest.substr(0, eq);
    change.value = eq == std::string::npos ? "" : rest.substr(eq + 1);
    require_live_key(change.key);
    if (change.key != "reinit_deepnorm_beta" && eq == std::string::npos) {
        throw InputError("live change '" + text + "' has no value; use KEY=VALUE, e.g. train.lr=1e-4");
    }
    return change;
}

void validate_planned_changes(const Config& start, int64_t first_step, int64_t last_step,
                              const std::vector<LiveChange>& changes) {
    std::vector<LiveChange> ordered = changes;
    std::stable_sort(ordered.begin(), ordered.end(), [first_step](const LiveChange& a, const LiveChange& b) {
        return (a.at_step < 0 ? first_step + 1 : a.at_step) < (b.at_step < 0 ? first_step + 1 : b.at_step);
    });
    Config config = start;
    for (size_t i = 0; i < ordered.size(); ++i) {
        const LiveChange& change = ordered[i];
        const std::string name =
            (change.at_step >= 0 ? std::to_string(change.at_step) + ":" : std::string()) + change.key +
            (change.key == "reinit_deepnorm_beta" ? "" : "=" + change.value);
        // Two values of one key before one step: only the last would count, silently.
        for (size_t j = 0; j < i; ++j)
            if (ordered[j].key == change.key && ordered[j].at_step == change.at_step &&
                change.key != "reinit_deepnorm_beta")
                throw InputError("two changes of " + change.key + " before step " +
                                 std::to_string(change.at_step) + " (" + ordered[j].value + ", then " +
                                 change.value + "): only the last would count; keep one");
        if (change.at_step > last_step)
            throw InputError("--change " + name + " comes after the run's last step " +
                             std::to_string(last_step) + "; give a step up to " + std::to_string(last_step) +
                             " or more train.steps");
        if (change.at_step >= 0 && change.at_step <= first_step)
            throw InputError("--change " + name + " is at or before step " + std::to_string(first_step) +
                             ", where this run starts; give a later step");
        if (change.key == "reinit_deepnorm_beta") {
            if (config.model.residual != Residual::DeepNorm)
                throw InputError("--change " + name +
                                 " re-initialises with DeepNorm's beta, and this run's " +
                                 "model.residual is " + to_string(config.model.residual) +
                                 " at that step; change model.residual to deepnorm first");
            continue;
        }
        try {
            apply_override(config, change.key + "=" + change.value);
            validate(config);
        } catch (const InputError& error) {
            throw InputError("--change " + name + ": " + error.what());
        }
    }
}

void LiveChangeQueue::post(LiveChange change) {
    std::lock_guard lock(m_mutex);
    m_pending.push_back(std::move(change));
}

std::vector<LiveChange> LiveChangeQueue::take_due(int64_t step) {
    std::lock_guard lock(m_mutex);
    std::vector<LiveChange> due;
    std::vector<LiveChange> later;
    for (auto& change : m_pending) {
        (change.at_step <= step ? due : later).push_back(std::move(change));
    }
    m_pending = std::move(later);
    return due;
}

bool LiveChangeQueue::empty() const {
    std::lock_guard lock(m_mutex);
    return m_pending.empty();
}

}  // namespace normlab
