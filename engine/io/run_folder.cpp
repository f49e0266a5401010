// Creates and appends to a run folder; every line is flushed as soon as it is written, and a failed
// write (disk full, file size limit) is a ResourceError instead of a silently shorter log.
#include "engine/io/run_folder.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/io/line_tailer.h"
#include "engine/io/records_json.h"
#include "engine/io/run_checkpoints.h"

namespace normlab {

namespace fs = std::filesystem;

namespace {
// Room kept for the final summary: a temporary copy of summary.json (well under a page) must fit
// while the old one still exists, on file systems that allocate whole pages.
constexpr size_t kSummaryReserveBytes = 16384;

// Whether `line` is a whole JSON object with a "step" of at most `step`.
bool line_up_to(const std::string& line, int64_t step) {
    const std::optional<nlohmann::json> record = parse_json_or_nothing(line);
    return record && record->is_object() && record->contains("step") && (*record)["step"].is_number() &&
           (*record)["step"].get<double>() <= static_cast<double>(step);
}

// Cuts `path` (a .jsonl log) before its first line that is not a whole JSON object with a "step" of at
// most `step`: the lines a resumed run writes again, and a line torn by a crash. A line longer than
// kMaxLineBytes (one no reader keeps) ends it too, read a chunk at a time so it is never held whole. A
// missing file is left missing.
void keep_lines_until(const std::string& path, int64_t step) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return;
    std::string line;
    std::vector<char> chunk(size_t{1} << 16);
    uintmax_t kept = 0, read = 0;
    bool ended = false;
    while (!ended && in) {
        in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        const auto got = static_cast<size_t>(in.gcount());
        for (size_t i = 0; i < got && !ended; ++i) {
            ++read;
            if (chunk[i] != '\n') {
                ended = line.size() >= kMaxLineBytes;
                line.push_back(chunk[i]);
            } else if (line_up_to(line, step)) {
                kept = read;
                line.clear();
            } else {
                ended = true;
            }
        }
    }
    in.close();
    std::error_code error;
    fs::resize_file(path, kept, error);
    if (error)
        throw ResourceError("cannot cut '" + path + "' back to step " + std::to_string(step) + ": " +
                            error.message());
}

// Removes what writers killed mid-write left in the folder (NAME.<pid>.<n>.tmp of an atomic write, the
// older NAME.tmp, an export's NAME.partial): the folder is ours from here, so none is being written.
void remove_stale_temporaries(const std::string& folder, const WriteFence& fence) {
    std::error_code error;
    if (fs::symlink_status(folder, error).type() != fs::file_type::directory) return;  // never through a link
    for (fs::directory_iterator entry(folder, error), end; !error && entry != end; entry.increment(error)) {
        const std::string extension = entry->path().extension().string();
        std::error_code ignored;
        if ((extension == ".tmp" || extension == ".partial") && !entry->is_directory(ignored)) {
            check_fence(fence);  // a sweep worker that lost its claim removes nothing of the new holder's
            fs::remove(entry->path(), ignored);
        }
    }
}

// Makes `path` an empty folder to write a run into, holding only its config.json: a new one, or an
// existing one emptied of a run's files with `overwrite` (an existing one that holds files is refused
// without).
// A folder that does not exist yet appears whole: made under a hidden name beside it, its config.json
// written there, then renamed into place. A run killed in its first moments then leaves nothing or a
// folder with its config (one killed while writing config.json straight into its new folder left a
// folder holding only a temporary file, which no reader takes for a run: the crash test found it).
void create_folder_with_config(const fs::path& target, const std::string& config_text,
                               const WriteFence& fence) {
    const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    std::error_code error;
    fs::create_directories(parent, error);
    if (error) throw InputError("cannot create run folder '" + target.string() + "': " + error.message());
    const fs::path staging =
        parent / ("." + target.filename().string() + ".new-" + std::to_string(::getpid()));
    fs::remove_all(staging, error);  // this process's own, from an earlier failed attempt
    fs::create_directory(staging, error);
    if (error) throw InputError("cannot create run folder '" + target.string() + "': " + error.message());
    try {
        write_file_atomically((staging / "config.json").string(), config_text, fence);
        check_fence(fence);
        fs::rename(staging, target);
    } catch (...) {
        fs::remove_all(staging, error);
        throw;
    }
}

void prepare_new_folder(const std::string& path, const std::string& config_text, bool overwrite,
                        const WriteFence& fence = {}) {
    std::error_code error;
    fs::path target = fs::path(path).lexically_normal();
    if (target.filename().empty()) target = target.parent_path();  // "runs/a/" is "runs/a"
    if (!fs::exists(path, error) && !target.filename().empty()) {
        try {
            create_folder_with_config(target, config_text, fence);
            return;
        } catch (const fs::filesystem_error& failed) {
            throw InputError("cannot create run folder '" + path + "': " + failed.code().message());
        }
    }
    if (fs::exists(path, error)) {
        if (!fs::is_directory(path, error)) {
            throw InputError("--out '" + path + "' exists and is not a folder; choose another path");
        }
        if (!fs::is_empty(path, error) && !overwrite) {
            throw InputError("--out '" + path +
                             "' already holds files; choose a new folder or pass --overwrite");
        }
        // Each removal checks the fence first: a sweep worker paused after its claim was checked must not
        // delete what the worker that took the point over has finished meanwhile.
        for (const char* name : {"metrics.jsonl", "events.jsonl", "summary.json", "config.json",
                                 "model.safetensors", ".summary-reserve"}) {
            check_fence(fence);
            fs::remove(fs::path(path) / name, error);
        }
        for (const auto& [step, kept] : checkpoints_in_folder(path)) {
            check_fence(fence);
            fs::remove(kept, error);
        }
    }
    fs::create_directories(path, error);
    if (error) throw InputError("cannot create run folder '" + path + "': " + error.message());
    write_file_atomically(path + "/config.json", config_text, fence);
}

// A log the folder appends to must be its own regular file (or not exist yet): a link planted in a
// folder that arrived from elsewhere would send the appends, and a resume's cut, into another file.
void require_own_file(const std::string& path) {
    std::error_code error;
    const fs::file_type type = fs::symlink_status(path, error).type();
    if (type == fs::file_type::not_found || type == fs::file_type::regular) return;
    throw InputError("'" + path + "' is " +
                     (type == fs::file_type::symlink ? "a link" : "not a regular file") +
                     "; a run folder's logs must be its own files: remove it, or write the run to a new "
                     "folder with --out");
}

// One JSON line; text that is not valid UTF-8 (a path in an error message) is replaced, not fatal.
std::string dump_line(const nlohmann::json& value) {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
}  // namespace

RunFolder::RunFolder(const std::string& path, const Config& config, bool overwrite, WriteFence fence)
    : m_path(path), m_fence(std::move(fence)) {
    check_fence(m_fence);
    prepare_new_folder(path, config_to_json_text(config) + "\n", overwrite, m_fence);
    start(config, std::ios::trunc, false);
}

RunFolder::RunFolder(const std::string& path, const Config& config, ForkOf fork, bool overwrite)
    : m_path(path) {
    prepare_new_folder(path, config_to_json_text(config) + "\n", overwrite);
    for (const char* name : {"metrics.jsonl", "events.jsonl"}) {
        const fs::path from = fs::path(fork.parent) / name;
        std::error_code error;
        if (!fs::exists(from, error)) continue;
        if (fs::symlink_status(from, error).type() != fs::file_type::regular)  // a link is not its own
            throw InputError("cannot fork '" + fork.parent + "': its " + name +
                             " is not a regular file of the folder (a link or a device)");
        fs::copy_file(from, fs::path(path) / name, fs::copy_options::overwrite_existing, error);
        if (error)
            throw ResourceError("cannot copy " + std::string(name) + " of '" + fork.parent + "' into '" +
                                path + "': " + error.message());
        keep_lines_until((fs::path(path) / name).string(), fork.step);
    }
    start(config, std::ios::app, false);
}

RunFolder::RunFolder(const std::string& path, const Config& config, ContinueFrom from) : m_path(path) {
    std::error_code error;
    if (!fs::is_directory(path, error)) throw InputError("--out '" + path + "' is not a folder");
    for (const char* name : {"/metrics.jsonl", "/events.jsonl"}) require_own_file(path + name);
    keep_lines_until(path + "/metrics.jsonl", from.step);
    keep_lines_until(path + "/events.jsonl", from.step);
    start(config, std::ios::app, true);
}

void RunFolder::start(const Config& config, std::ios::openmode mode, bool write_config) {
    remove_stale_temporaries(m_path, m_fence);
    if (write_config)
        write_file_atomically(m_path + "/config.json", config_to_json_text(config) + "\n", m_fence);
    write_summary({{"status", "running"}, {"steps", 0}});
    try {
        write_file_atomically(reserve_path(), std::string(kSummaryReserveBytes, ' '), m_fence);
        for (const char* name : {"/metrics.jsonl", "/events.jsonl"}) require_own_file(m_path + name);
        m_metrics.open(m_path + "/metrics.jsonl", std::ios::out | mode);
        m_events.open(m_path + "/events.jsonl", std::ios::out | mode);
        if (!m_metrics || !m_events) throw InputError("cannot write into run folder '" + m_path + "'");
    } catch (const WriteFenceLost&) {
        throw;
    } catch (const std::exception& error) {
        record_failed_start(error.what());
        throw;
    }
}

void RunFolder::record_failed_start(const std::string& reason) {
    try {
        write_summary({{"status", "failed"}, {"steps", 0}, {"error", reason}});
    } catch (const WriteFenceLost&) {
    } catch (const std::exception&) {
        std::error_code ignored;  // not even that fits: no summary beats one that says "running" forever
        fs::remove(m_path + "/summary.json", ignored);
    }
}

RunFolder::~RunFolder() {
    try {
        check_fence(m_fence);
    } catch (const WriteFenceLost&) {
        return;  // the reserve there is the new owner's
    }
    std::error_code ignored;
    fs::remove(reserve_path(), ignored);
}

void RunFolder::append_line(std::ofstream& file, const char* name, const std::string& line) {
    const std::streamoff complete = file.tellp();
    file << line << '\n' << std::flush;
    if (!file) {
        file.close();  // what reached the disk of this line goes: readers never see half a line
        std::error_code ignored;
        if (complete >= 0) fs::resize_file(m_path + "/" + name, static_cast<uintmax_t>(complete), ignored);
        throw ResourceError("writing " + std::string(name) + " in run folder '" + m_path +
                            "' failed; check free disk space and permissions");
    }
}

void RunFolder::append_metrics(const StepRecord& record) {
    append_line(m_metrics, "metrics.jsonl", dump_line(to_json(record)));
}

void RunFolder::append_event(const Event& event) {
    append_line(m_events, "events.jsonl", dump_line(to_json(event)));
}

void RunFolder::write_summary(const nlohmann::json& summary) {
    const std::string text = summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    try {
        write_file_atomically(m_path + "/summary.json", text, m_fence);
    } catch (const ResourceError&) {
        std::error_code ignored;
        if (!fs::remove(reserve_path(), ignored)) throw;  // nothing left to free
        write_file_atomically(m_path + "/summary.json", text, m_fence);
    }
}

void RunFolder::write_provenance(const nlohmann::json& provenance, const std::string& tokenizer_model) {
    try {
        if (!tokenizer_model.empty()) write_file_atomically(tokenizer_path(), tokenizer_model, m_fence);
        write_file_atomically(m_path + "/provenance.json",
                              provenance.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                              m_fence);
    } catch (const WriteFenceLost&) {
        throw;
    } catch (const std::exception& error) {
        record_failed_start(error.what());
        throw;
    }
}

}  // namespace normlab
