// RunFolderReader: tolerant parsing of the run-folder contract, line by line.
#include "engine/io/run_folder_reader.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/small_file.h"
#include "engine/io/checkpoint.h"
#include "engine/io/records_json.h"

namespace normlab {

namespace {
namespace fs = std::filesystem;

// Nothing when the file is missing, not a regular file, too large or not JSON (the reader tolerates it).
std::optional<nlohmann::json> parse_json_file(const fs::path& path) {
    try {
        return parse_json_or_nothing(read_small_file(path.string(), kMaxJsonFileBytes));
    } catch (const InputError&) {
        return std::nullopt;
    }
}

// Each non-empty line parsed by `parse` into `out`; returns how many lines were not valid (skipped).
template <typename Parse, typename Item>
int64_t parse_lines(const std::vector<std::string>& lines, Parse parse, std::vector<Item>& out) {
    int64_t skipped = 0;
    out.reserve(out.size() + lines.size());
    for (const std::string& line : lines) {
        if (line.empty()) continue;
        try {
            out.push_back(parse(line));
        } catch (const InputError&) {
            ++skipped;
        }
    }
    return skipped;
}

Event parse_event_line(const std::string& line) {
    const std::optional<nlohmann::json> parsed = parse_json_or_nothing(line);
    if (!parsed) throw InputError("not JSON");
    return event_from_json(*parsed);
}

std::optional<double> optional_number(const nlohmann::json& json, const char* key) {
    const auto it = json.find(key);
    if (it == json.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
}

// A count (steps, a step, a block) as a whole number: nothing when it is missing, not a number or
// beyond int64's range (a foreign writer's 1e300 must not be converted: undefined behaviour).
std::optional<int64_t> optional_count(const nlohmann::json& json, const char* key) {
    const std::optional<double> number = optional_number(json, key);
    if (!number || !(*number >= -0x1p63 && *number < 0x1p63)) return std::nullopt;
    return static_cast<int64_t>(*number);
}

// What another writer's config.json shares with NormLab's: the model's shape, where it gives one;
// `known` collects the keys it gave.
Config shared_config(const nlohmann::json& foreign, std::vector<std::string>& known) {
    Config config;
    const auto model = foreign.find("model");
    if (model == foreign.end() || !model->is_object()) return config;
    auto take = [&](const char* key, int& member) {
        const auto it = model->find(key);
        if (it == model->end() || !it->is_number_integer() || it->get<int64_t>() <= 0) return;
        member = static_cast<int>(std::min<int64_t>(it->get<int64_t>(), 1 << 20));
        known.push_back(std::string("model.") + key);
    };
    take("layers", config.model.layers);
    take("d_model", config.model.d_model);
    take("heads", config.model.heads);
    // The norm type, when it names one of NormLab's (the bridge detects it for recognised models).
    const auto norm = model->find("norm_type");
    if (norm != model->end() && norm->is_string()) {
        const std::vector<std::string> choices = config_key_choices("model.norm_type");
        if (std::find(choices.begin(), choices.end(), norm->get<std::string>()) != choices.end()) {
            apply_override(config, "model.norm_type=" + norm->get<std::string>());
            known.push_back("model.norm_type");
        }
    }
    return config;
}

// A value of another writer's config as text: a string as itself, anything else as compact JSON, cut
// to a length a table can show.
std::string value_text(const nlohmann::json& value) {
    return text_excerpt(value.is_string() ? value.get<std::string>() : value.dump(), 60);
}

// The keys another writer keeps of its own: its "user" object's entries (at most 64) and "world_size".
FlatConfig writer_keys(const nlohmann::json& foreign) {
    FlatConfig keys;
    const auto user = foreign.find("user");
    if (user != foreign.end() && user->is_object()) {
        for (auto entry = user->begin(); entry != user->end() && keys.size() < 64; ++entry)
            keys["user." + text_excerpt(entry.key(), 40)] = value_text(entry.value());
    }
    const auto torch = foreign.find("torch");
    if (torch != foreign.end() && torch->is_object() && torch->contains("world_size"))
        keys["world_size"] = value_text((*torch)["world_size"]);
    return keys;
}

// A run folder has config.json or metrics.jsonl.
bool is_run_folder(const fs::path& folder) {
    std::error_code ignored;
    return fs::exists(folder / "config.json", ignored) || fs::exists(folder / "metrics.jsonl", ignored);
}

// The sub-folders of `dir` that are runs, sorted; an entry that cannot be looked at (a symlink loop,
// a dangling link, no permission) is skipped with a note instead of ending the scan.
std::vector<std::string> run_subfolders(const fs::path& dir, std::vector<std::string>* notes) {
    std::vector<std::string> runs;
    std::error_code error;
    fs::directory_iterator entry(dir, error), end;
    for (; !error && entry != end; entry.increment(error)) {
        std::error_code entry_error;
        const bool folder = entry->is_directory(entry_error);
        if (entry_error) {
            if (notes != nullptr)
                notes->push_back("skipped " + entry->path().string() + ": " + entry_error.message());
            continue;
        }
        // A hidden folder is not listed: one being created (".NAME.new-PID", RunFolder) or left by a
        // run killed while it was.
        const bool hidden = entry->path().filename().string().starts_with('.');
        if (folder && !hidden && is_run_folder(entry->path())) runs.push_back(entry->path().string());
    }
    if (error && notes != nullptr)
        notes->push_back("stopped reading " + dir.string() + ": " + error.message());
    std::sort(runs.begin(), runs.end());
    return runs;
}
}  // namespace

std::vector<std::string> find_run_folders(const std::string& dir, std::vector<std::string>* notes) {
    const fs::path root(dir);
    std::error_code error;
    if (!fs::exists(root, error)) throw InputError(dir + " does not exist; check the path");
    if (!fs::is_directory(root, error)) throw InputError(dir + " is not a folder");
    if (is_run_folder(root)) return {root.string()};
    // A sweep folder stands for the runs of its points (S/runs/<id>/), looked at one level down only.
    const bool sweep = fs::exists(root / "sweep.json", error) && fs::is_directory(root / "runs", error);
    const fs::path scanned = sweep ? root / "runs" : root;
    if (sweep && is_run_folder(scanned)) return {scanned.string()};
    std::vector<std::string> runs = run_subfolders(scanned, notes);
    if (runs.empty())
        throw InputError(scanned.string() + " holds no run folder (none has config.json or metrics.jsonl)");
    return runs;
}

std::string shown_status(const RunFolderSummary& summary, double now) {
    if (summary.status.empty()) return "unknown";
    if (summary.status == "running" && summary.written_at && now - *summary.written_at >= kStaleAfterSeconds)
        return "stale";
    return summary.status;
}

RunStatus status_from_summary(const std::string& status) {
    if (status == "failed") return RunStatus::Stopped;  // a writer's crash: it trains no more
    for (const auto& [each, name] : kRunStatusNames)
        if (name == status) return each;
    return RunStatus::Running;
}

RunFolderReader::RunFolderReader(std::string folder)
    : m_folder(std::move(folder)),
      m_metrics((fs::path(m_folder) / "metrics.jsonl").string()),
      m_events((fs::path(m_folder) / "events.jsonl").string()) {
    const fs::path root(m_folder);
    std::error_code error;
    if (!fs::exists(root, error)) throw InputError(m_folder + " does not exist; check the path");
    if (!fs::is_directory(root, error))
        throw InputError(m_folder +
                         " is not a folder; open a run folder (it holds config.json and metrics.jsonl)");
    const bool has_config = fs::exists(root / "config.json", error);
    if (!has_config && !fs::exists(root / "metrics.jsonl", error))
        throw InputError(m_folder + " is not a run folder: it has neither config.json nor metrics.jsonl");
    if (!has_config) {
        m_configNote = "no config.json: the configuration is unknown";
        return;
    }
    const std::optional<nlohmann::json> raw = parse_json_file(root / "config.json");
    if (raw && raw->is_object() && raw->contains("source") && (*raw)["source"].is_string()) {
        m_source = (*raw)["source"].get<std::string>();
        m_config = shared_config(*raw, m_knownKeys);
        m_writerKeys = writer_keys(*raw);
        m_configNote =
            "written by " + m_source + "; of its config, only the model's shape is a NormLab setting";
        return;
    }
    try {
        m_config = config_from_file((root / "config.json").string());
    } catch (const InputError& problem) {
        m_configNote =
            std::string("config.json was not read (") + problem.what() + "); showing the data only";
    }
}

RunFolderReader::Update RunFolderReader::poll(size_t max_bytes) {
    Update update;
    LineTailer::Poll metrics = m_metrics.poll(max_bytes);
    LineTailer::Poll events = m_events.poll(max_bytes);
    update.restarted = metrics.restarted || events.restarted;
    update.more = metrics.more || events.more;
    update.skippedLines =
        parse_lines(
            metrics.lines, [this](const std::string& line) { return m_parser.parse(line); }, update.records) +
        parse_lines(events.lines, parse_event_line, update.events) + metrics.longLines + events.longLines;
    m_skipped += update.skippedLines;
    return update;
}

std::optional<RunFolderSummary> RunFolderReader::summary() const {
    return read_run_summary(m_folder);
}

std::optional<RunFolderSummary> read_run_summary(const std::string& folder) {
    const std::optional<nlohmann::json> json = parse_json_file(fs::path(folder) / "summary.json");
    if (!json || !json->is_object()) return std::nullopt;
    RunFolderSummary summary;
    if (json->contains("status") && (*json)["status"].is_string())
        summary.status = (*json)["status"].get<std::string>();
    if (const auto steps = optional_count(*json, "steps")) summary.steps = *steps;
    summary.final_loss = optional_number(*json, "final_loss");
    summary.final_val_loss = optional_number(*json, "final_val_loss");
    summary.diverged_at = optional_count(*json, "diverged_at");
    if (const auto block = optional_count(*json, "first_bad_layer");
        block && *block >= 0 && *block <= INT_MAX)
        summary.first_bad_layer = static_cast<int>(*block);
    summary.wall_seconds = optional_number(*json, "wall_seconds");
    summary.heartbeat = optional_number(*json, "heartbeat");
    summary.written_at = summary.heartbeat;
    std::error_code error;
    const auto modified = fs::last_write_time(fs::path(folder) / "summary.json", error);
    if (!summary.written_at && !error)
        summary.written_at =
            std::chrono::duration<double>(std::chrono::file_clock::to_sys(modified).time_since_epoch())
                .count();
    if (json->contains("error") && (*json)["error"].is_string())
        summary.error = (*json)["error"].get<std::string>();
    try {
        summary.checkpoint_step = checkpoint_step((fs::path(folder) / "model.safetensors").string());
    } catch (const InputError&) {  // none, or not a whole checkpoint: no step to resume from
    }
    return summary;
}

}  // namespace normlab
