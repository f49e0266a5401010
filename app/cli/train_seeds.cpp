// Seed groups for `normlab-cli train --seeds`: the seed list, the group folder's checks (a group of
// other settings is never mixed in), group.json, and the seeds trained in turn. A re-run of the same
// command skips the seeds whose run folder already completed or diverged.
#include "app/cli/train_seeds.h"

#include <charconv>
#include <filesystem>
#include <iostream>
#include <set>

#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/io/run_folder_reader.h"
#include "engine/io/run_group.h"

namespace normlab::cli {

namespace {
namespace fs = std::filesystem;

constexpr uint64_t kMaxSeed = (uint64_t{1} << 53);  // exact in every JSON reader

const char* const kSeedsForms = "--seeds N (seeds 1..N), A-B (seeds A..B) or a list a,b,c";

uint64_t seed_of(const std::string& text, const std::string& whole) {
    uint64_t seed = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || seed > kMaxSeed)
        throw InputError("--seeds '" + text_excerpt(whole) + "': '" + text_excerpt(text) +
                         "' is not a seed (a whole number up to 2^53); give " + kSeedsForms);
    return seed;
}

// Whether `folder` holds a run that completed or diverged (a finished result, kept on a re-run).
bool finished(const fs::path& folder) {
    std::error_code error;
    if (!fs::exists(folder / "summary.json", error)) return false;
    try {
        const std::optional<RunFolderSummary> summary = RunFolderReader(folder.string()).summary();
        return summary && (summary->status == "completed" || summary->status == "diverged");
    } catch (const InputError&) {
        return false;  // not a run yet: trained again
    }
}

std::string seeds_text(const std::vector<uint64_t>& seeds) {
    std::string text;
    for (uint64_t seed : seeds) text += (text.empty() ? "" : ",") + std::to_string(seed);
    return text;
}

// Refuses a DIR this group may not train into: a file, a folder of other files, or a group of other
// seeds or settings. Returns whether DIR already holds this group (a re-run).
bool check_group_folder(const SeedGroupRequest& request) {
    const fs::path out(request.out);
    std::error_code error;
    if (!fs::exists(out, error)) return false;
    if (!fs::is_directory(out, error))
        throw InputError("--out '" + request.out + "' exists and is not a folder; choose another path");
    if (request.overwrite || fs::is_empty(out, error)) return false;
    if (!fs::exists(out / kGroupFileName, error))
        throw InputError("--out '" + request.out +
                         "' already holds files and no group.json; choose a new folder or pass --overwrite");
    const GroupFile group = read_group_file((out / kGroupFileName).string());
    if (group.seeds != request.seeds)
        throw InputError("--out '" + request.out + "' holds a group of seeds " + seeds_text(group.seeds) +
                         ", not " + seeds_text(request.seeds) +
                         "; choose a new folder, the same --seeds, or pass --overwrite");
    std::string keys;
    for (const std::string& key : group_config_differences(group.config, request.config))
        keys += (keys.empty() ? "" : ", ") + key;
    if (!keys.empty())
        throw InputError("--out '" + request.out + "' holds a group of another config (" + keys +
                         " differ); choose a new folder or pass --overwrite");
    return true;
}
}  // namespace

std::vector<uint64_t> parse_seed_list(const std::string& text) {
    std::vector<uint64_t> seeds;
    const size_t dash = text.find('-');
    if (text.find(',') != std::string::npos) {
        for (size_t start = 0; start <= text.size();) {
            const size_t comma = std::min(text.find(',', start), text.size());
            seeds.push_back(seed_of(text.substr(start, comma - start), text));
            start = comma + 1;
        }
    } else if (dash != std::string::npos) {
        const uint64_t first = seed_of(text.substr(0, dash), text),
                       last = seed_of(text.substr(dash + 1), text);
        if (last < first)
            throw InputError("--seeds " + text + " is an empty range (B < A); write A-B with A <= B, e.g. " +
                             std::to_string(last) + "-" + std::to_string(first));
        if (last - first >= kMaxGroupSeeds)
            throw InputError("--seeds " + text + " names " + std::to_string(last - first + 1) +
                             " seeds; a group has at most " + std::to_string(kMaxGroupSeeds) +
                             " (split it into several groups)");
        for (uint64_t seed = first; seed <= last; ++seed) seeds.push_back(seed);
    } else {
        const uint64_t count = seed_of(text, text);
        if (count == 0) throw InputError("--seeds 0 names no seed; give N >= 1 for seeds 1..N, or A-B");
        if (count > kMaxGroupSeeds)
            throw InputError("--seeds " + text + " names " + text + " seeds; a group has at most " +
                             std::to_string(kMaxGroupSeeds) + " (split it into several groups)");
        for (uint64_t seed = 1; seed <= count; ++seed) seeds.push_back(seed);
    }
    if (seeds.size() > kMaxGroupSeeds)
        throw InputError("--seeds names " + std::to_string(seeds.size()) + " seeds; a group has at most " +
                         std::to_string(kMaxGroupSeeds) + " (split it into several groups)");
    std::set<uint64_t> seen;
    for (uint64_t seed : seeds)
        if (!seen.insert(seed).second)
            throw InputError("--seeds " + text_excerpt(text) + " names seed " + std::to_string(seed) +
                             " twice; name each seed once");
    return seeds;
}

std::string seed_group_help() {
    return "  --seeds SPEC         a seed group: train once per seed (N: seeds 1..N; A-B; a,b,c; at most " +
           std::to_string(kMaxGroupSeeds) +
           ")\n"
           "                       into DIR/seed-<n>/, with DIR/group.json; the same command again skips\n"
           "                       the seeds whose run completed or diverged\n";
}

int train_seed_group(const SeedGroupRequest& request, const TrainOneSeed& train_one) {
    if (request.resume)
        throw InputError(
            "--seeds trains new runs and cannot be combined with --resume; resume one seed's "
            "run with --resume DIR/seed-N/model.safetensors --out DIR/seed-N");
    const bool rerun = check_group_folder(request);
    std::error_code error;
    fs::create_directories(request.out, error);
    if (error) throw InputError("cannot create group folder '" + request.out + "': " + error.message());
    write_file_atomically((fs::path(request.out) / kGroupFileName).string(),
                          group_json(request.config, request.seeds).dump(2) + "\n");
    for (uint64_t seed : request.seeds) {
        const fs::path folder = fs::path(request.out) / seed_folder_name(seed);
        if (rerun && finished(folder)) {
            std::cerr << "normlab-cli train: " << folder.string() << " already finished; skipped\n";
            continue;
        }
        const int code = train_one(seed, folder.string(), rerun || request.overwrite);
        if (code != 0) return code;
    }
    return 0;
}

}  // namespace normlab::cli
