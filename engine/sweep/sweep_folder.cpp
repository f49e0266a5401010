// Sweep folders: the plan on disk, each point's state from its summary.json and claim, and shards.
#include "engine/sweep/sweep_folder.h"

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/small_file.h"
#include "engine/io/line_tailer.h"
#include "engine/io/metrics_line_parser.h"
#include "engine/sweep/sweep_paths.h"

namespace normlab {

namespace {
namespace fs = std::filesystem;

std::optional<int> whole_number(const std::string& text) {
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}
}  // namespace

const char* to_string(PointState state) {
    switch (state) {
        case PointState::ToDo:
            return "to do";
        case PointState::Running:
            return "running";
        case PointState::Completed:
            return "done";
        case PointState::Diverged:
            return "diverged";
        case PointState::Failed:
            return "failed";
    }
    return "?";
}

void write_sweep(const std::string& sweep_dir, const SweepPlan& plan) {
    const fs::path file = fs::path(sweep_dir) / "sweep.json";
    const std::string text = sweep_plan_to_json(plan).dump(2) + "\n";
    std::error_code error;
    if (fs::exists(file, error)) {
        if (read_small_file(file.string(), kMaxJsonFileBytes, "sweep file") == text) return;  // planned again
        throw InputError(sweep_dir + " already holds a different sweep; plan into a new folder");
    }
    // a run's folder or an edge search's is not overlaid with a sweep (its files would sit beside a plan)
    for (const char* other : {"summary.json", "metrics.jsonl", "edge.json"})
        if (fs::exists(fs::path(sweep_dir) / other, error))
            throw InputError(sweep_dir + " holds " +
                             (std::string(other) == "edge.json" ? "an edge search" : "a run") + " (" + other +
                             "); give the sweep a folder of its own (--out)");
    fs::create_directories(sweep_dir, error);
    if (error) throw InputError("cannot create " + sweep_dir + ": " + error.message());
    write_file_atomically(file.string(), text);
}

SweepPlan load_sweep(const std::string& sweep_dir, std::string* text_out) {
    const fs::path file = fs::path(sweep_dir) / "sweep.json";
    const std::optional<std::string> text =
        read_small_file_if_present(file.string(), kMaxJsonFileBytes, "sweep file");
    std::error_code error;
    if (!text && fs::exists(fs::path(sweep_dir) / "edge.json", error))
        throw InputError(sweep_dir + " is an edge search (edge.json): normlab-cli sweep edge " + sweep_dir +
                         " continues and reports it; each of its searches is a sweep folder in " + sweep_dir +
                         "/searches/");
    if (!text)
        throw InputError(sweep_dir +
                         " is not a sweep folder (no sweep.json); make one with normlab-cli sweep plan");
    if (text_out) *text_out = *text;
    return sweep_plan_from_json(parse_json<nlohmann::ordered_json>(*text, file.string()), file.string());
}

std::string point_folder(const std::string& sweep_dir, const SweepPoint& point) {
    return (fs::path(sweep_dir) / "runs" / point.id).string();
}

PointProgress point_progress(const std::string& sweep_dir, const SweepPoint& point) {
    PointProgress progress;
    progress.claim = PointClaim::read(sweep_dir, point.id);
    std::optional<std::string> problem = sweep_folder_problem(sweep_dir, "runs/" + point.id);
    if (!problem) problem = claim_file_problem(sweep_dir, point.id);
    if (problem) {
        progress.state = PointState::Failed;  // no worker writes there (or can claim it): nothing runs
        progress.error = std::move(*problem);
        return progress;
    }
    const std::string folder = point_folder(sweep_dir, point);
    progress.summary = read_run_summary(folder);
    const std::string status = progress.summary ? progress.summary->status : "";
    if (status == "completed")
        progress.state = PointState::Completed;
    else if (status == "diverged")
        progress.state = PointState::Diverged;
    else if (progress.claim && PointClaim::looks_live(sweep_dir, point.id, *progress.claim))
        progress.state = PointState::Running;
    else if (status == "failed")
        progress.state = PointState::Failed;
    if (progress.state == PointState::Failed) progress.error = progress.summary->error;
    return progress;
}

std::optional<double> first_logged_loss(const std::string& run_folder) {
    try {
        const std::string metrics = (fs::path(run_folder) / "metrics.jsonl").string();
        const std::string head = RegularFile::open(metrics, "metrics file").read_head(kMaxLineBytes + 1);
        const size_t end = head.find('\n');
        if (end == std::string::npos) return std::nullopt;
        return MetricsLineParser().parse(head.substr(0, end)).loss;
    } catch (const InputError&) {
        return std::nullopt;
    }
}

Shard parse_shard(const std::string& text) {
    const size_t slash = text.find('/');
    const std::optional<int> index = whole_number(text.substr(0, slash));
    const std::optional<int> count =
        slash == std::string::npos ? std::nullopt : whole_number(text.substr(slash + 1));
    if (!index || !count || *count < 1 || *index < 0 || *index >= *count)
        throw InputError("--shard " + text +
                         ": write i/n with 0 <= i < n (e.g. 0/4 for the first of four workers)");
    return {*index, *count};
}

std::optional<Shard> shard_from_slurm() {
    const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
    const char* count = std::getenv("SLURM_ARRAY_TASK_COUNT");
    if (!id || !count) return std::nullopt;
    const char* minimum = std::getenv("SLURM_ARRAY_TASK_MIN");
    const char* step = std::getenv("SLURM_ARRAY_TASK_STEP");
    const std::optional<int> task = whole_number(id), tasks = whole_number(count);
    const std::optional<int> first = minimum ? whole_number(minimum) : std::optional<int>(0);
    const std::optional<int> stride = step ? whole_number(step) : std::optional<int>(1);
    if (!task || !tasks || !first || !stride || *stride < 1)
        throw InputError(
            "SLURM_ARRAY_TASK_ID / _COUNT / _MIN / _STEP are not whole numbers; pass --shard i/n");
    return parse_shard(std::to_string((*task - *first) / *stride) + "/" + std::to_string(*tasks));
}

}  // namespace normlab
