// collect_sweep reads each point's summary and first metrics line; lr_sensitivity groups points by
// every axis but the learning rate, averages seeds per lr (with t intervals), and takes mean minus
// best, with a bootstrap interval over seeds.
#include "engine/sweep/sweep_collect.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <span>

#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/number_format.h"
#include "engine/stats/bootstrap.h"

namespace normlab {

namespace {
// A learning rate of the axis as a number: a quoted one ("1e-3") applies as the number it spells, like
// --set train.lr=1e-3 (every point of a plan was validated, so each spells one).
double lr_number(const nlohmann::json& value) {
    const nlohmann::json number = parse_json(override_text(value), "a learning rate of the sweep");
    if (!number.is_number()) throw InputError("a learning rate of the sweep is not a number");
    return number.get<double>();
}

std::string csv_text(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}
}  // namespace

int learning_rate_axis(const SweepPlan& plan) {
    const std::string key = plan.spec.command ? kCommandLearningRateKey : "train.lr";
    for (size_t a = 0; a < plan.spec.axes.size(); ++a)
        if (plan.spec.axes[a].keys == std::vector<std::string>{key}) return static_cast<int>(a);
    return -1;
}

std::optional<double> CollectedPoint::final_loss(bool validation) const {
    if (!progress.summary || progress.state != PointState::Completed) return std::nullopt;
    const std::optional<double> loss = validation && progress.summary->final_val_loss
                                           ? progress.summary->final_val_loss
                                           : progress.summary->final_loss;
    return loss && std::isfinite(*loss) ? loss : std::nullopt;
}

std::optional<double> CollectedPoint::clamped_loss(bool validation) const {
    if (!is_finished(progress.state) || !initial_loss) return std::nullopt;
    const std::optional<double> loss = final_loss(validation);
    return loss ? std::min(*loss, *initial_loss) : *initial_loss;
}

std::vector<CollectedPoint> collect_sweep(const std::string& sweep_dir, const SweepPlan& plan) {
    std::vector<CollectedPoint> points;
    points.reserve(plan.points.size());
    for (const SweepPoint& point : plan.points) {
        CollectedPoint collected{point, point_progress(sweep_dir, point), std::nullopt};
        if (collected.progress.summary)
            collected.initial_loss = first_logged_loss(point_folder(sweep_dir, point));
        points.push_back(std::move(collected));
    }
    return points;
}

namespace {
// The sensitivity of per-lr, per-seed clamped losses: the mean over lrs of the seed mean minus the best
// seed mean (into `best`). With `seeds`, only those seed positions (a bootstrap resample, repeats kept).
double sensitivity_of(const std::vector<std::vector<double>>& per_lr,
                      const std::optional<std::span<const double>>& seeds, std::optional<double>* best) {
    double total = 0.0, lowest = std::numeric_limits<double>::infinity();
    for (const std::vector<double>& values : per_lr) {
        double sum = 0.0;
        size_t count = 0;
        if (seeds)
            for (double at : *seeds) sum += values[static_cast<size_t>(at)], ++count;
        else
            for (double value : values) sum += value, ++count;
        const double mean = sum / static_cast<double>(count);
        total += mean;
        lowest = std::min(lowest, mean);
    }
    if (best) *best = lowest;
    return total / static_cast<double>(per_lr.size()) - lowest;
}

// Resampling seeds (the same seed positions at every lr): each lr needs the same two or more seeds.
std::optional<stats::Interval> sensitivity_interval(const std::vector<std::vector<double>>& per_lr) {
    const size_t seeds = per_lr.front().size();
    if (seeds < 2 || std::any_of(per_lr.begin(), per_lr.end(), [seeds](const std::vector<double>& values) {
            return values.size() != seeds;
        }))
        return std::nullopt;
    std::vector<double> positions(seeds);
    std::iota(positions.begin(), positions.end(), 0.0);
    return stats::bootstrap_percentile_ci(
        positions,
        [&per_lr](std::span<const double> resample) { return sensitivity_of(per_lr, resample, nullptr); },
        kSensitivityResamples, 0.95, 1);
}
}  // namespace

std::vector<SensitivityRow> lr_sensitivity(const SweepPlan& plan, const std::vector<CollectedPoint>& points) {
    const int lr = learning_rate_axis(plan);
    if (lr < 0) return {};
    const std::string& lr_key = plan.spec.axes[lr].keys.front();
    const std::vector<nlohmann::json>& lr_values = plan.spec.axes[lr].values[0];
    std::map<std::vector<std::string>, SensitivityRow> groups;  // ordered by the first point's labels
    std::vector<std::vector<std::string>> order;
    std::map<std::vector<std::string>, std::vector<std::vector<double>>> samples;  // per lr, per seed
    for (const CollectedPoint& collected : points) {
        std::vector<std::string> group = collected.point.labels;
        group.erase(group.begin() + lr);
        if (!groups.count(group)) {
            order.push_back(group);
            SensitivityRow& row = groups[group];
            row.group = group;
            for (const nlohmann::json& value : lr_values) row.lrs.push_back(lr_number(value));
            samples[group].assign(lr_values.size(), {});
        }
        const double lr_value = lr_number(collected.point.set.at(lr_key));
        const size_t at = std::find(groups[group].lrs.begin(), groups[group].lrs.end(), lr_value) -
                          groups[group].lrs.begin();
        const std::optional<double> clamped = collected.clamped_loss();
        samples[group][at].push_back(clamped ? *clamped : std::nan(""));
    }
    std::vector<SensitivityRow> rows;
    for (const std::vector<std::string>& group : order) {
        SensitivityRow row = groups[group];
        for (const std::vector<double>& seeds : samples[group]) {
            const bool finite = !seeds.empty() && std::all_of(seeds.begin(), seeds.end(),
                                                              [](double v) { return std::isfinite(v); });
            const stats::Estimate estimate = finite ? stats::estimate_mean(seeds) : stats::Estimate{};
            row.clamped.push_back(finite ? estimate.mean : std::nan(""));
            row.ci_low.push_back(finite && estimate.ci ? estimate.ci->low : std::nan(""));
            row.ci_high.push_back(finite && estimate.ci ? estimate.ci->high : std::nan(""));
        }
        if (std::all_of(row.clamped.begin(), row.clamped.end(), [](double v) { return std::isfinite(v); })) {
            row.sensitivity = sensitivity_of(samples[group], std::nullopt, &row.best);
            row.sensitivity_ci = sensitivity_interval(samples[group]);
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

void write_points_csv(const SweepPlan& plan, const std::vector<CollectedPoint>& points, std::ostream& out) {
    out << "index,id";
    for (const SweepAxis& axis : plan.spec.axes) out << ',' << csv_text(axis.name());
    out << ",seed,status,steps,final_loss,final_val_loss,initial_loss,diverged_at,wall_seconds\n";
    for (const CollectedPoint& collected : points) {
        out << collected.point.index << ',' << csv_text(collected.point.id);
        for (const std::string& label : collected.point.labels) out << ',' << csv_text(label);
        out << ',' << collected.point.seed << ',' << to_string(collected.progress.state);
        const std::optional<RunFolderSummary>& summary = collected.progress.summary;
        out << ',';
        if (summary) out << summary->steps;
        write_csv_number(out, summary ? summary->final_loss : std::nullopt);
        write_csv_number(out, summary ? summary->final_val_loss : std::nullopt);
        write_csv_number(out, collected.initial_loss);
        out << ',';
        if (summary && summary->diverged_at) out << *summary->diverged_at;
        write_csv_number(out, summary ? summary->wall_seconds : std::nullopt);
        out << '\n';
    }
}

void write_sensitivity_csv(const SweepPlan& plan, const std::vector<SensitivityRow>& rows,
                           std::ostream& out) {
    const int lr = learning_rate_axis(plan);
    std::vector<std::string> names;
    for (size_t a = 0; a < plan.spec.axes.size(); ++a)
        if (static_cast<int>(a) != lr) names.push_back(plan.spec.axes[a].name());
    for (const std::string& name : names) out << csv_text(name) << ',';
    out << "lr_sensitivity,best_loss";
    if (!rows.empty())
        for (double value : rows.front().lrs) out << ",lr=" << format_number(value);
    out << ",lr_sensitivity_ci95_low,lr_sensitivity_ci95_high\n";
    for (const SensitivityRow& row : rows) {
        for (const std::string& label : row.group) out << csv_text(label) << ',';
        if (row.sensitivity) out << format_number(*row.sensitivity);
        write_csv_number(out, row.best);
        for (double value : row.clamped)
            write_csv_number(out, std::isfinite(value) ? std::optional(value) : std::nullopt);
        write_csv_number(out, row.sensitivity_ci ? std::optional(row.sensitivity_ci->low) : std::nullopt);
        write_csv_number(out, row.sensitivity_ci ? std::optional(row.sensitivity_ci->high) : std::nullopt);
        out << '\n';
    }
}

}  // namespace normlab
