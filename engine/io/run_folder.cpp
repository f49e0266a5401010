// Creates and appends to a run folder; every line is flushed as soon as it is written, and a failed
// write (disk full, file size limit) is a ResourceError instead of a silently shorter log.
#include "engine/io/run_folder.h"

#include <filesystem>

#include "engine/core/errors.h"
#include "engine/io/records_json.h"

namespace normlab {

namespace fs = std::filesystem;

namespace {
// Room kept for the final summary: a temporary copy of summary.json (well under a page) must fit
// while the old one still exists, on file systems that allocate whole pages.
constexpr size_t kSummaryReserveBytes = 16384;

// One JSON line; text that is not valid UTF-8 (a path in an error message) is replaced, not fatal.
std::string dump_line(const nlohmann::json& value) {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
}  // namespace

RunFolder::RunFolder(const std::string& path, const Config& config, bool overwrite) : m_path(path) {
    std::error_code error;
    if (fs::exists(path, error)) {
        if (!fs::is_directory(path, error)) {
            throw InputError("--out '" + path + "' exists and is not a folder; choose another path");
        }
        if (!fs::is_empty(path, error) && !overwrite) {
            throw InputError("--out '" + path +
                             "' already holds files; choose a new folder or pass --overwrite");
        }
        for (const char* name : {"metrics.jsonl", "events.jsonl", "summary.json", "config.json",
                                 "model.safetensors", ".summary-reserve"}) {
            fs::remove(fs::path(path) / name, error);
        }
    }
    fs::create_directories(path, error);
    if (error) throw InputError("cannot create run folder '" + path + "': " + error.message());
    write_file_atomically(path + "/config.json", config_to_json_text(config) + "\n");
    write_summary({{"status", "running"}, {"steps", 0}});
    write_file_atomically(reserve_path(), std::string(kSummaryReserveBytes, ' '));
    m_metrics.open(path + "/metrics.jsonl", std::ios::trunc);
    m_events.open(path + "/events.jsonl", std::ios::trunc);
    if (!m_metrics || !m_events) throw InputError("cannot write into run folder '" + path + "'");
}

RunFolder::~RunFolder() {
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
        write_file_atomically(m_path + "/summary.json", text);
    } catch (const ResourceError&) {
        std::error_code ignored;
        if (!fs::remove(reserve_path(), ignored)) throw;  // nothing left to free
        write_file_atomically(m_path + "/summary.json", text);
    }
}

void RunFolder::write_provenance(const nlohmann::json& provenance) {
    write_file_atomically(m_path + "/provenance.json",
                          provenance.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace normlab
