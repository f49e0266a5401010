// Live-change parsing and the thread-safe command queue.
// The live-key check lives here so that --change and Trainer::apply reject the same keys the same way.
#include "engine/train/commands.h"

#include <algorithm>

#include "engine/core/errors.h"

namespace normlab {

const std::vector<std::string>& live_keys() {
    static const std::vector<std::string> keys = {"train.lr",
                                                  "train.warmup_steps",
                                                  "train.schedule",
                                                  "train.clip_grad_norm",
                                                  "train.weight_decay",
                                                  "model.norm_placement",
                                                  "model.norm_type",
                                                  "model.residual",
                                                  "model.deepnorm_alpha",
                                                  "model.deepnorm_beta",
                                                  "telemetry.every",
                                                  "telemetry.val_every",
                                                  "device",
                                                  "threads",
                                                  "reinit_deepnorm_beta"};
    return keys;
}

void require_live_key(const std::string& key) {
    const auto& keys = live_keys();
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
    std::string list;
    for (const auto& live : keys) list += (list.empty() ? "" : ", ") + live;
    throw InputError("'" + key + "' cannot change during a run; live keys are: " + list +
                     " (other keys need a new run)");
}

Command parse_command(const std::string& text) {
    Command command;
    std::string rest = text;
    const size_t colon = rest.find(':');
    const size_t equals = rest.find('=');
    if (colon != std::string::npos && (equals == std::string::npos || colon < equals)) {
        const std::string step_text = rest.substr(0, colon);
        try {
            size_t used = 0;
            command.at_step = std::stoll(step_text, &used);
            if (used != step_text.size() || command.at_step < 1) throw InputError("");
        } catch (const std::exception&) {
            throw InputError("live change '" + text + "': '" + step_text +
                             "' is not a step number >= 1; use STEP:KEY=VALUE, e.g. 200:train.lr=1e-4");
        }
        rest = rest.substr(colon + 1);
    }
    const size_t eq = rest.find('=');
    command.key = rest.substr(0, eq);
    command.value = eq == std::string::npos ? "" : rest.substr(eq + 1);
    require_live_key(command.key);
    if (command.key != "reinit_deepnorm_beta" && eq == std::string::npos) {
        throw InputError("live change '" + text + "' has no value; use KEY=VALUE, e.g. train.lr=1e-4");
    }
    return command;
}

void CommandQueue::post(Command command) {
    std::lock_guard lock(m_mutex);
    m_pending.push_back(std::move(command));
}

std::vector<Command> CommandQueue::take_due(int64_t step) {
    std::lock_guard lock(m_mutex);
    std::vector<Command> due;
    std::vector<Command> later;
    for (auto& command : m_pending) {
        (command.at_step <= step ? due : later).push_back(std::move(command));
    }
    m_pending = std::move(later);
    return due;
}

bool CommandQueue::empty() const {
    std::lock_guard lock(m_mutex);
    return m_pending.empty();
}

}  // namespace normlab
