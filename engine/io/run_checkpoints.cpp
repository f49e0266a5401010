// Kept checkpoints: model-step-<N>.safetensors hard-linked to the checkpoint just written (copied where
// links are refused), listed by step, pruned oldest first, and looked up for `train --fork`/`--resume`.
#include "engine/io/run_checkpoints.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"

namespace normlab {

namespace fs = std::filesystem;

namespace {
constexpr std::string_view kPrefix = "model-step-";
constexpr std::string_view kSuffix = ".safetensors";

// The step in a kept checkpoint's file name, or -1 for any other name.
int64_t step_in_name(const std::string& name) {
    if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
        !name.ends_with(kSuffix))
        return -1;
    const char* first = name.data() + kPrefix.size();
    const char* last = name.data() + name.size() - kSuffix.size();
    int64_t step = -1;
    const auto [end, error] = std::from_chars(first, last, step);
    return error == std::errc() && end == last && step >= 0 ? step : -1;
}

// Step -> path of the kept checkpoints: regular files only (a link planted in the folder is not one).
std::map<int64_t, std::string> kept_checkpoints(const std::string& folder) {
    std::map<int64_t, std::string> kept;
    std::error_code error;
    for (fs::directory_iterator entry(folder, error), end; !error && entry != end; entry.increment(error)) {
        std::error_code ignored;
        const int64_t step = step_in_name(entry->path().filename().string());
        if (step >= 0 && entry->symlink_status(ignored).type() == fs::file_type::regular)
            kept[step] = entry->path().string();
    }
    return kept;
}
}  // namespace

std::string kept_checkpoint_path(const std::string& folder, int64_t step) {
    return folder + "/" + std::string(kPrefix) + std::to_string(step) + std::string(kSuffix);
}

std::map<int64_t, std::string> checkpoints_in_folder(const std::string& folder) {
    std::map<int64_t, std::string> found = kept_checkpoints(folder);
    const std::string latest = folder + "/model.safetensors";
    std::error_code error;
    if (fs::symlink_status(latest, error).type() != fs::file_type::regular) return found;
    try {
        found.emplace(checkpoint_step(latest), latest);  // a kept file of the same step is the same state
    } catch (const std::exception&) {
    }
    return found;
}

void keep_checkpoint(const std::string& latest, const std::string& folder, int64_t step) {
    const std::string target = kept_checkpoint_path(folder, step);
    const std::string temporary = temporary_path_for(target);
    if (::link(latest.c_str(), temporary.c_str()) != 0) {
        std::error_code error;
        fs::copy_file(latest, temporary, error);
        if (error) {
            std::error_code ignored;
            fs::remove(temporary, ignored);
            throw ResourceError("cannot keep checkpoint '" + target + "' (neither a link nor a copy of '" +
                                latest + "' could be made): " + error.message());
        }
    }
    if (std::rename(temporary.c_str(), target.c_str()) != 0) {
        const int saved = errno;
        std::error_code ignored;
        fs::remove(temporary, ignored);
        throw ResourceError("cannot keep checkpoint '" + target + "': " + std::strerror(saved));
    }
}

void prune_kept_checkpoints(const std::string& folder, int keep) {
    if (keep <= 0) return;
    std::map<int64_t, std::string> kept = kept_checkpoints(folder);
    while (kept.size() > static_cast<size_t>(keep)) {
        std::error_code ignored;
        fs::remove(kept.begin()->second, ignored);
        kept.erase(kept.begin());
    }
}

std::string checkpoint_at_step(const std::string& folder, int64_t step) {
    std::error_code error;
    if (!std::filesystem::is_directory(folder, error))
        throw InputError("'" + folder + "' is not a run folder (" +
                         (std::filesystem::exists(folder, error) ? "not a directory" : "it does not exist") +
                         "); give the folder of the run to fork");
    const std::map<int64_t, std::string> found = checkpoints_in_folder(folder);
    const auto match = found.find(step);
    if (match != found.end()) return match->second;
    if (found.empty())
        throw InputError(
            "'" + folder + "' holds no checkpoint; train it with --set train.checkpoint_every=N " +
            "--set train.checkpoint_keep=0 to keep one every N steps (or --save-checkpoint for the "
            "last step)");
    // Named whole up to a dozen; beyond that the first and last few, so the message stays readable.
    std::string steps;
    size_t index = 0;
    for (const auto& entry : found) {
        const bool shown = found.size() <= 12 || index < 5 || index + 5 >= found.size();
        if (shown) steps += (steps.empty() ? "" : ", ") + std::to_string(entry.first);
        if (!shown && index == 5) steps += ", ...";
        ++index;
    }
    // One kept is the default (train.checkpoint_keep=1: the newest); say how to keep the others next time.
    throw InputError(
        "'" + folder + "' holds no checkpoint at step " + std::to_string(step) + "; it holds " +
        std::to_string(found.size()) + " at step" + (found.size() == 1 ? " " : "s ") + steps +
        " (pick one of them" +
        (found.size() == 1 ? "; a run keeps every one it writes with --set train.checkpoint_keep=0)" : ")"));
}

}  // namespace normlab
