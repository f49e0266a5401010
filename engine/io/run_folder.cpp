// Creates and appends to a run folder; every line is flushed as soon as it is written.
#include "engine/io/run_folder.h"

#include <filesystem>

#include "engine/core/errors.h"
#include "engine/io/records_json.h"

namespace normlab {

namespace fs = std::filesystem;

void write_file_atomically(const std::string& path, const std::string& text) {
    const std::string temporary = path + ".tmp";
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out)
            throw InputError("cannot write '" + temporary +
                             "'; check that the folder exists and is writable");
        out << text;
        if (!out.flush()) throw InputError("writing '" + temporary + "' failed (disk full?)");
    }
    std::error_code error;
    fs::rename(temporary, path, error);
    if (error) throw InputError("cannot rename '" + temporary + "' to '" + path + "': " + error.message());
}

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
        for (const char* name :
             {"metrics.jsonl", "events.jsonl", "summary.json", "config.json", "model.safetensors"}) {
            fs::remove(fs::path(path) / name, error);
        }
    }
    fs::create_directories(path, error);
    if (error) throw InputError("cannot create run folder '" + path + "': " + error.message());
    write_file_atomically(path + "/config.json", config_to_json_text(config) + "\n");
    write_summary({{"status", "running"}, {"steps", 0}});
    m_metrics.open(path + "/metrics.jsonl", std::ios::trunc);
    m_events.open(path + "/events.jsonl", std::ios::trunc);
    if (!m_metrics || !m_events) throw InputError("cannot write into run folder '" + path + "'");
}

void RunFolder::append_metrics(const StepRecord& record) {
    m_metrics << to_json(record).dump() << '\n' << std::flush;
}

void RunFolder::append_event(const Event& event) {
    m_events << to_json(event).dump() << '\n' << std::flush;
}

void RunFolder::write_summary(const nlohmann::json& summary) {
    write_file_atomically(m_path + "/summary.json", summary.dump(2) + "\n");
}

}  // namespace normlab
