// A sweep folder S: S/sweep.json (the plan), S/runs/<id>/ (each point's run folder, written by
// whichever worker claimed it) and S/claims/. Reads where each point stands, from files alone, so
// any machine sharing the folder sees the same state.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "engine/io/run_folder_reader.h"
#include "engine/sweep/point_claim.h"
#include "engine/sweep/sweep_plan.h"

namespace normlab {

enum class PointState { ToDo, Running, Completed, Diverged, Failed };
const char* to_string(PointState state);
// Completed and diverged points are results: workers skip them.
inline bool is_finished(PointState state) {
    return state == PointState::Completed || state == PointState::Diverged;
}

struct PointProgress {
    PointState state = PointState::ToDo;
    std::optional<RunFolderSummary> summary;
    std::optional<ClaimInfo> claim;
    std::string error;  // why a failed point failed: its summary's error, or its folder's problem
};

// Writes S/sweep.json (creating S); refuses a folder that holds a different plan.
void write_sweep(const std::string& sweep_dir, const SweepPlan& plan);
// Reads S/sweep.json (its text into `text` when given). Throws InputError when S is not a sweep folder.
SweepPlan load_sweep(const std::string& sweep_dir, std::string* text = nullptr);
std::string point_folder(const std::string& sweep_dir, const SweepPoint& point);
PointProgress point_progress(const std::string& sweep_dir, const SweepPoint& point);
// The loss of the point's first logged step (the initial loss the learning-rate sensitivity clamps
// at), from the first line of its metrics.jsonl.
std::optional<double> first_logged_loss(const std::string& run_folder);

// "i/n": the points with index % n == i. Throws InputError for anything else.
struct Shard {
    int index = 0, count = 1;
    bool holds(int point_index) const { return point_index % count == index; }
};
Shard parse_shard(const std::string& text);
// SLURM_ARRAY_TASK_ID (counted from SLURM_ARRAY_TASK_MIN) of SLURM_ARRAY_TASK_COUNT when set.
std::optional<Shard> shard_from_slurm();

}  // namespace normlab
