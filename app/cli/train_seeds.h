// `normlab-cli train --seeds SPEC`: one config trained once per seed into DIR/seed-<n>/, one after
// another, with DIR/group.json naming the runs (engine/io/run_group.h). cmd_train.cpp trains each seed;
// this file parses the seeds, guards the group folder, skips seeds already finished and writes group.json.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/config/config.h"

namespace normlab::cli {

// The most seeds one group may have.
inline constexpr size_t kMaxGroupSeeds = 100;

// "N" (seeds 1..N), "A-B" (A..B) or "a,b,c". Throws InputError saying what to write instead: an empty
// or reversed range, a repeated seed, more than kMaxGroupSeeds seeds.
std::vector<uint64_t> parse_seed_list(const std::string& text);

// The --seeds line of train --help.
std::string seed_group_help();

struct SeedGroupRequest {
    std::vector<uint64_t> seeds;
    std::string out;         // the group folder
    bool overwrite = false;  // train every seed again, whatever DIR holds
    bool resume = false;     // --resume was given too (refused)
    Config config;           // the shared config (its train.seed is replaced per run)
};

// Trains one seed into `folder`; `overwrite` reuses a non-empty folder. Returns train's exit code.
using TrainOneSeed = std::function<int(uint64_t seed, const std::string& folder, bool overwrite)>;

// Trains the group: refuses (InputError) --resume and a DIR that holds something other than this
// group (unless --overwrite), writes group.json, then trains each seed whose folder has not completed
// or diverged. Returns 0, or 130 as soon as a seed was stopped by Ctrl-C.
int train_seed_group(const SeedGroupRequest& request, const TrainOneSeed& train_one);

}  // namespace normlab::cli
