// Two groups of runs compared as a controlled experiment: each group's mean of a metric with its t
// interval, and the difference B - A, paired by seed when both groups hold the same seeds, else Welch's
// unpaired difference. Diverged and unfinished runs are counted and left out, never averaged.
#pragma once
#include <string>
#include <vector>

#include "engine/analysis/run_metric.h"
#include "engine/stats/estimates.h"

namespace normlab {

struct GroupSummary {
    std::string path;
    std::vector<RunValue> runs;  // every member, in seed order where seeds are known
    stats::Estimate estimate;    // over the runs used
    size_t diverged = 0, unfinished = 0;
};

// Reads every member of the group `path` stands for (group_members) and estimates the metric's mean.
GroupSummary summarize_group(const std::string& path, const MetricSpec& spec, double level = 0.95,
                             std::vector<std::string>* notes = nullptr);

// The same for runs whose values are already known (the window's, from the records it holds): sorted by
// seed, the diverged and unfinished counted, the mean estimated over the runs used.
GroupSummary summarize_runs(const std::string& path, std::vector<RunValue> runs, double level = 0.95);

struct GroupDifference {
    bool paired = false;
    std::string why;            // why paired or unpaired, in words
    stats::Estimate estimate;   // of B - A
    size_t pairs_left_out = 0;  // paired: seeds whose run in A or B was left out
};

// B - A. Paired when every run of both groups has a known seed, no seed repeats within a group and
// both hold the same seeds: the difference of each seed's two runs, over the seeds where both were used.
GroupDifference compare_groups(const GroupSummary& a, const GroupSummary& b, double level = 0.95);

}  // namespace normlab
