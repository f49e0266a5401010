// Reads a run folder (NormLab's CLI or window, a sweep, another machine, or another writer following
// the same contract): config.json, summary.json, and metrics.jsonl / events.jsonl through LineTailers,
// so a folder still being written can be polled for what is new. Bad lines are counted and skipped,
// never fatal; only a folder that is not a run at all is an error.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/config.h"
#include "engine/config/config_diff.h"
#include "engine/io/line_tailer.h"
#include "engine/io/metrics_line_parser.h"
#include "engine/train/telemetry.h"

namespace normlab {

// summary.json as read (every field optional: a foreign or older writer may leave some out).
struct RunFolderSummary {
    std::string status;  // "running", "completed", "diverged", "stopped", "failed" or empty
    int64_t steps = 0;
    std::optional<double> final_loss, final_val_loss;
    std::optional<int64_t> diverged_at;
    int first_bad_layer = -1;
    std::string error;  // a failed run's reason
    std::optional<double> wall_seconds;
    std::optional<double> heartbeat;  // unix seconds of the last rewrite while running
    // unix seconds summary.json was last written: its heartbeat, else the file's modification time
    std::optional<double> written_at;
    // The step model.safetensors holds, by its own metadata (normlab_step), never summary.json's
    // checkpoint_step, which is written after the file and can lag it; nothing without a whole file.
    std::optional<int64_t> checkpoint_step;
};

// A "running" run whose summary.json has not been rewritten for this long has lost its writer (a killed
// job, a crashed script): NormLab's writers rewrite it every 2-5 s, the bridge at every flush of its
// logging window, so only a step slower than this could look stale while alive.
inline constexpr double kStaleAfterSeconds = 600.0;

// The status to show: summary.json's, or "stale" for a "running" one written kStaleAfterSeconds or more
// before `now` (unix seconds); "unknown" when it names none.
std::string shown_status(const RunFolderSummary& summary, double now);

class RunFolderReader {
  public:
    // Throws InputError when `folder` is not a directory or holds neither config.json nor metrics.jsonl.
    explicit RunFolderReader(std::string folder);

    const std::string& folder() const { return m_folder; }
    // The run's config; the defaults when config.json is missing or from a writer NormLab cannot read
    // (configNote() then says why).
    const Config& config() const { return m_config; }
    const std::string& configNote() const { return m_configNote; }
    // The writer named by config.json's "source" (e.g. "normlab-torch", the PyTorch bridge); empty for
    // NormLab's own runs. Of another writer's config only the model's shape is read.
    const std::string& source() const { return m_source; }
    // The config keys another writer gave (e.g. "model.layers"); empty for NormLab's own runs, whose
    // every key is known. Comparisons of runs use only these (config_diff's flatten_config `only`).
    const std::vector<std::string>& knownKeys() const { return m_knownKeys; }
    // The keys another writer records beyond NormLab's: its user's own config ("user.lr") and the number
    // of processes ("world_size"), each value as text, for telling its runs apart; empty for NormLab's.
    const FlatConfig& writerKeys() const { return m_writerKeys; }

    struct Update {
        std::vector<StepRecord> records;
        std::vector<Event> events;
        int64_t skippedLines = 0;  // lines that were not valid records or over kMaxLineBytes (not fatal)
        bool restarted = false;    // a file was truncated or replaced: records are from its start
        bool more = false;         // poll again: a backlog was cut at the poll's size
    };
    // What was appended since the last poll (everything, on the first).
    Update poll(size_t max_bytes = size_t{16} << 20);
    // summary.json read now; nothing when it is missing or unreadable.
    std::optional<RunFolderSummary> summary() const;
    int64_t skippedLines() const { return m_skipped; }

  private:
    std::string m_folder;
    Config m_config;
    std::string m_configNote;
    std::string m_source;
    std::vector<std::string> m_knownKeys;
    FlatConfig m_writerKeys;
    LineTailer m_metrics, m_events;
    MetricsLineParser m_parser;
    int64_t m_skipped = 0;
};

// summary.json (and the checkpoint's step) of the folder, whether or not it holds the rest of a run (a
// sweep point that failed before it started has only this); nothing when missing or unreadable.
std::optional<RunFolderSummary> read_run_summary(const std::string& folder);

// The run folders `dir` stands for: itself when it is one (config.json or metrics.jsonl), the runs of
// a sweep folder's points, else its sub-folders that are runs (sorted by name). Throws InputError when
// it is not a folder or holds none. An entry that cannot be looked at (a symlink loop) is skipped, with
// a line in `notes` when given.
std::vector<std::string> find_run_folders(const std::string& dir, std::vector<std::string>* notes = nullptr);

// The run's status as the engine's enum, from summary.json's text ("failed" reads as Stopped).
RunStatus status_from_summary(const std::string& status);

}  // namespace normlab
