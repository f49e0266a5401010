// What a sweep found: one row per point (its overrides, status, losses, divergence, wall time) and
// the learning-rate sensitivity of Wortsman et al. 2023 per combination of the other axes: the mean
// over the learning rates tried of min(final loss, initial loss), minus the best of those.
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "engine/stats/estimates.h"
#include "engine/sweep/sweep_folder.h"

namespace normlab {

struct CollectedPoint {
    SweepPoint point;
    PointProgress progress;
    std::optional<double> initial_loss;  // the first logged step's loss
    // The loss the maps show: with `validation`, the final validation loss when there is one, else
    // the final training loss; nothing for a point that has not finished or has no finite final loss.
    std::optional<double> final_loss(bool validation = true) const;
    // min(final loss, initial loss), and the initial loss for a diverged point.
    std::optional<double> clamped_loss(bool validation = true) const;
};

std::vector<CollectedPoint> collect_sweep(const std::string& sweep_dir, const SweepPlan& plan);

struct SensitivityRow {
    std::vector<std::string> group;  // the other axes' labels (seeds pooled)
    std::vector<double> lrs;         // the learning rates, in the axis' order
    std::vector<double> clamped;     // per lr: the mean over seeds of the clamped loss (NaN: not yet)
    // per lr: the 95% Student t interval of that mean over seeds (NaN with fewer than two seeds)
    std::vector<double> ci_low, ci_high;
    std::optional<double> sensitivity, best;  // nothing until every point of the group finished
    // The sensitivity's 95% percentile bootstrap interval, resampling seeds (kSensitivityResamples,
    // a fixed seed): with two seeds or more, each at every lr.
    std::optional<stats::Interval> sensitivity_ci;
};
inline constexpr int kSensitivityResamples = 2000;

// The sweep's learning-rate axis, the one lr_sensitivity and the map's lr curves run along: train.lr,
// or in a sweep over the user's command the axis user.lr (kCommandLearningRateKey); -1 when none.
inline constexpr const char* kCommandLearningRateKey = "user.lr";
int learning_rate_axis(const SweepPlan& plan);

// Per combination of the axes other than the learning rate's (empty when the sweep has none).
std::vector<SensitivityRow> lr_sensitivity(const SweepPlan& plan, const std::vector<CollectedPoint>& points);

void write_points_csv(const SweepPlan& plan, const std::vector<CollectedPoint>& points, std::ostream& out);
void write_sensitivity_csv(const SweepPlan& plan, const std::vector<SensitivityRow>& rows, std::ostream& out);

}  // namespace normlab
