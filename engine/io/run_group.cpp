// group.json written and read (version 1), and the members of a group folder, a run folder or a folder
// of runs. Run folder names in group.json must be plain names, so no file can point a reader elsewhere.
#include "engine/io/run_group.h"

#include <filesystem>

#include "engine/config/config_diff.h"
#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/io/run_folder_reader.h"

namespace normlab {

namespace {
namespace fs = std::filesystem;
constexpr const char* kFormat = "normlab-group";
constexpr int kVersion = 1;

nlohmann::json shared_config_json(const Config& config) {
    nlohmann::json json = config_to_json(config);
    json["train"].erase("seed");
    return json;
}

bool plain_name(const std::string& name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
           name.find('\0') == std::string::npos;
}
}  // namespace

std::string seed_folder_name(uint64_t seed) {
    return "seed-" + std::to_string(seed);
}

nlohmann::ordered_json group_json(const Config& config, const std::vector<uint64_t>& seeds) {
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    for (uint64_t seed : seeds) runs.push_back({{"seed", seed}, {"folder", seed_folder_name(seed)}});
    return {{"format", kFormat},
            {"version", kVersion},
            {"seeds", seeds},
            {"runs", runs},
            {"config", nlohmann::ordered_json(shared_config_json(config))}};
}

GroupFile read_group_file(const std::string& path) {
    const nlohmann::json json = read_json_file(path, "group file");
    const auto fail = [&path](const std::string& what) {
        return InputError(path + " is not a NormLab group file: " + what);
    };
    if (!json.is_object() || !json.contains("format") || json["format"] != kFormat)
        throw fail("\"format\" is not \"normlab-group\"");
    if (!json.contains("version") || json["version"] != kVersion)
        throw fail("version " + json_excerpt(json.value("version", nlohmann::json())) +
                   " is not 1; a newer NormLab wrote it");
    if (!json.contains("runs") || !json["runs"].is_array()) throw fail("\"runs\" is not a list");
    GroupFile group;
    for (const nlohmann::json& run : json["runs"]) {
        if (!run.is_object() || !run.contains("seed") || !run["seed"].is_number_unsigned() ||
            !run.contains("folder") || !run["folder"].is_string())
            throw fail("a run is not {\"seed\": N, \"folder\": NAME}: " + json_excerpt(run));
        const std::string folder = run["folder"].get<std::string>();
        if (!plain_name(folder)) throw fail("run folder '" + text_excerpt(folder) + "' is not a plain name");
        group.seeds.push_back(run["seed"].get<uint64_t>());
        group.folders.push_back(folder);
    }
    if (!json.contains("config") || !json["config"].is_object()) throw fail("\"config\" is not an object");
    group.config = config_from_json_text(json["config"].dump(), path + " (its config)");
    return group;
}

std::vector<std::string> group_config_differences(const Config& a, const Config& b) {
    FlatConfig flat_a = flatten_config(a), flat_b = flatten_config(b);
    flat_a.erase("train.seed");
    flat_b.erase("train.seed");
    return differing_keys({flat_a, flat_b});
}

std::vector<GroupMember> group_members(const std::string& dir, std::vector<std::string>* notes) {
    const fs::path group_path = fs::path(dir) / kGroupFileName;
    std::error_code error;
    if (fs::exists(group_path, error)) {
        const GroupFile group = read_group_file(group_path.string());
        std::vector<GroupMember> members;
        for (size_t i = 0; i < group.seeds.size(); ++i)
            members.push_back({(fs::path(dir) / group.folders[i]).string(), group.seeds[i]});
        return members;
    }
    std::vector<GroupMember> members;
    for (const std::string& folder : find_run_folders(dir, notes)) members.push_back({folder, std::nullopt});
    return members;
}

}  // namespace normlab
