// The path keys of a config, and the rule for paths a sweep.json brings: relative and inside S unless
// the planner gave them on the command line.
#include "engine/sweep/sweep_path_policy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "engine/config/tokenizer_spec.h"
#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/sweep/sweep_plan.h"

namespace normlab {

namespace {
namespace fs = std::filesystem;

// A key whose value names a file when `names_file` says so (data.tokenizer only in its path form).
struct PathKey {
    const char* key;
    std::string& (*field)(Config&);
    bool (*names_file)(const std::string& value);
};

const std::vector<PathKey>& path_fields() {
    static const std::vector<PathKey> keys = {
        {"data.text_path", [](Config& config) -> std::string& { return config.data.text_path; },
         [](const std::string& value) { return !value.empty(); }},
        {"data.tokenizer", [](Config& config) -> std::string& { return config.data.tokenizer; },
         [](const std::string& value) {
             return !value.empty() && parse_tokenizer(value).kind == TokenizerSpec::Kind::File;
         }}};
    return keys;
}

bool trusted(const SweepPlan& plan, const std::string& key) {
    return std::find(plan.paths_from_command_line.begin(), plan.paths_from_command_line.end(), key) !=
           plan.paths_from_command_line.end();
}

// Why `path` may not come from a shared sweep.json, or empty.
std::string path_problem(const std::string& path) {
    const fs::path value(path);
    if (value.is_absolute()) return "is an absolute path";
    for (const fs::path& part : value)
        if (part == "..") return "leaves the sweep folder (\"..\")";
    return "";
}

// A path the planner gave on the command line is trusted only as far as sweep.json itself: recorded in
// a file someone else owns or can write, "paths_from_command_line" could be anyone's claim.
void require_trusted_plan(const std::string& sweep_dir, const std::string& key) {
    const std::string file = (fs::path(sweep_dir) / "sweep.json").string();
    struct stat info {};
    const std::string why = ::stat(file.c_str(), &info) != 0 ? "cannot be checked"
                            : info.st_uid != ::geteuid()     ? "belongs to another user"
                            : (info.st_mode & (S_IWGRP | S_IWOTH)) != 0
                                ? "can be written by others sharing the folder (chmod go-w it, as its owner)"
                                : "";
    if (!why.empty())
        throw InputError(file + " names " + key +
                         " outside the sweep folder as its planner's own "
                         "(paths_from_command_line), but the file " +
                         why +
                         ", so anyone could have put "
                         "that there; put the file inside the sweep folder, or plan the sweep yourself");
}

// An untrusted relative path, placed in the sweep folder, must resolve inside it: a link there (the
// file, or a folder on the way) to something outside is refused.
void require_inside(const std::string& sweep_dir, const std::string& path, const std::string& key) {
    std::error_code error;
    const fs::path root = fs::canonical(sweep_dir, error);
    if (error) return;
    const fs::path target = fs::weakly_canonical(path, error);
    if (error) return;  // the reader says what is wrong with it
    if (std::mismatch(root.begin(), root.end(), target.begin(), target.end()).first != root.end())
        throw InputError(key + " '" + text_excerpt(path, 60) +
                         "' leads outside the sweep folder (through "
                         "a link, to '" +
                         text_excerpt(target.string(), 60) +
                         "'); a sweep's files stay "
                         "inside it: copy the file into the sweep folder");
}

void check_config(Config config, const SweepPlan& plan, const std::string& source, const std::string& where) {
    for (const PathKey& entry : path_fields()) {
        const std::string& path = entry.field(config);
        if (!entry.names_file(path) || trusted(plan, entry.key)) continue;
        const std::string problem = path_problem(path);
        if (problem.empty()) continue;
        throw InputError(source + ": " + where + entry.key + " '" + text_excerpt(path, 60) + "' " + problem +
                         "; a sweep folder is shared, so its paths must stay inside it unless the planner "
                         "gives them on the command line: plan again with --set " +
                         entry.key + "=PATH");
    }
}
}  // namespace

const std::vector<std::string>& sweep_path_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> names;
        for (const PathKey& entry : path_fields()) names.push_back(entry.key);
        return names;
    }();
    return keys;
}

void check_sweep_paths(const SweepPlan& plan, const std::string& source) {
    for (const std::string& key : plan.paths_from_command_line)
        if (std::find(sweep_path_keys().begin(), sweep_path_keys().end(), key) == sweep_path_keys().end())
            throw InputError(source + ": paths_from_command_line names '" + text_excerpt(key, 60) +
                             "', which is not a path key (" + sweep_path_keys().front() + ")");
    check_config(plan.base, plan, source, "the base config's ");
    for (const SweepPoint& point : plan.points)
        check_config(point_config(plan, point), plan, source, "point " + point.id + "'s ");
}

void place_sweep_paths(Config& config, const SweepPlan& plan, const std::string& sweep_dir) {
    for (const PathKey& entry : path_fields()) {
        std::string& path = entry.field(config);
        if (!entry.names_file(path)) continue;
        if (trusted(plan, entry.key)) {
            require_trusted_plan(sweep_dir, entry.key);
            continue;
        }
        if (fs::path(path).is_relative()) path = (fs::path(sweep_dir) / path).string();
        require_inside(sweep_dir, path, entry.key);
    }
}

}  // namespace normlab
