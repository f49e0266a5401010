// Seed groups (docs/formats.md#seed-groups): one config trained with several seeds, a run folder per
// seed (`seed-<n>`) beside `group.json`, which names the runs, their seeds and the shared config. Also
// the members of any folder that stands for a group: a group folder, a run folder or a folder of runs.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/config/config.h"

namespace normlab {

inline constexpr const char* kGroupFileName = "group.json";

// The run folder name of a seed in a group: "seed-3".
std::string seed_folder_name(uint64_t seed);

// group.json's content for `config` (whose train.seed is left out: each run has its own) and seeds.
nlohmann::ordered_json group_json(const Config& config, const std::vector<uint64_t>& seeds);

// A group.json as read back: its seeds in order and its shared config. Throws InputError naming the file
// and what is wrong (not a group file, an unknown version, a run folder that is not a plain name).
struct GroupFile {
    std::vector<uint64_t> seeds;
    std::vector<std::string> folders;  // the runs' folder names, one per seed
    Config config;
};
GroupFile read_group_file(const std::string& path);

// The config keys (as in --set) whose values differ between two groups' shared configs.
std::vector<std::string> group_config_differences(const Config& a, const Config& b);

// One run of a group: its folder (which may not exist yet: a group still training) and the seed
// group.json gives it (nothing where there is no group.json).
struct GroupMember {
    std::string folder;
    std::optional<uint64_t> seed;
};
// The runs `dir` stands for: group.json's runs when it has one, else find_run_folders' (a run folder
// is a group of one). Throws InputError when it is neither.
std::vector<GroupMember> group_members(const std::string& dir, std::vector<std::string>* notes = nullptr);

}  // namespace normlab
