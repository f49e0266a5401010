// The run folder (docs/formats.md#the-run-folder): config.json, metrics.jsonl, events.jsonl and
// summary.json, written incrementally and flushed per line, so a crash loses nothing already logged;
// a full disk leaves no torn line and still gets the final summary (room for it is reserved).
#pragma once
#include <cstdint>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/config/config.h"
#include "engine/core/atomic_file.h"
#include "engine/train/telemetry.h"

namespace normlab {

class RunFolder {
  public:
    // Creates the folder (refusing a non-empty existing one unless overwrite) and writes config.json
    // and a summary.json with status "running". Throws InputError naming the path. `fence` (a sweep
    // point's claim) runs before every file is replaced or removed; once it throws, nothing more is.
    // The .jsonl appends are not fenced: a worker that takes a point over starts them as new files, so
    // the lines of one that lost it go to files no longer in the folder.
    RunFolder(const std::string& path, const Config& config, bool overwrite, WriteFence fence = {});
    // Continues the run in `path` from its own checkpoint at `step` (train --resume D/model.safetensors
    // --out D): the checkpoint stays until a new one replaces it, and metrics and events keep every
    // line up to `step` (later ones, and a torn last line, are cut: those steps are trained again).
    struct ContinueFrom {
        int64_t step;
    };
    RunFolder(const std::string& path, const Config& config, ContinueFrom from);
    // A fork of the run in `parent` at its step `step` (train --fork): a new folder, as the first
    // constructor makes it, whose metrics and events start as copies of the parent's up to `step`.
    struct ForkOf {
        std::string parent;
        int64_t step;
    };
    RunFolder(const std::string& path, const Config& config, ForkOf fork, bool overwrite);
    // Gives the room reserved for the last summary back (the run's summary is written by then).
    ~RunFolder();
    RunFolder(const RunFolder&) = delete;
    RunFolder& operator=(const RunFolder&) = delete;

    const std::string& path() const { return m_path; }
    // Append one line and flush it. Throw ResourceError when the write fails (disk full), after cutting
    // the file back to its last complete line.
    void append_metrics(const StepRecord& record);
    void append_event(const Event& event);
    // Replaces summary.json atomically (temporary file + rename). When that fails (a full disk), frees
    // the room reserved at the start and tries once more, so a failed run can still say so.
    void write_summary(const nlohmann::json& summary);
    // Writes provenance.json (engine/io/provenance.h), atomically, once the run's backend is known, and
    // before it tokenizer.model when `tokenizer_model` (a serialized SentencePiece model) is not empty; a
    // failure is recorded as a failed start (summary.json) and rethrown.
    void write_provenance(const nlohmann::json& provenance, const std::string& tokenizer_model = {});
    std::string tokenizer_path() const { return m_path + "/tokenizer.model"; }

    std::string checkpoint_path() const { return m_path + "/model.safetensors"; }

  private:
    // Writes config.json (unless a new folder was made with it), a "running" summary and the reserve, and
    // opens the logs with `mode`.
    void start(const Config& config, std::ios::openmode mode, bool write_config);
    // A start that failed (a full disk): summary.json says "failed" with the reason, or is removed.
    void record_failed_start(const std::string& reason);
    void append_line(std::ofstream& file, const char* name, const std::string& line);
    std::string reserve_path() const { return m_path + "/.summary-reserve"; }

    std::string m_path;
    WriteFence m_fence;
    std::ofstream m_metrics;
    std::ofstream m_events;
};

}  // namespace normlab
