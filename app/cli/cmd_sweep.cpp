// `normlab-cli sweep`: plan a grid into a sweep folder, run its points (here, N at a time, or one
// shard or one point for a scheduler), and report where it stands (status) and what it found
// (collect). Running lives in sweep_run.cpp; this file parses and reports.
#include <filesystem>
#include <iostream>

#include "app/cli/cli_options.h"
#include "app/cli/subcommands.h"
#include "app/cli/sweep_edge.h"
#include "app/cli/sweep_run.h"
#include "app/cli/train_seeds.h"
#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/resource_dir.h"
#include "engine/core/small_file.h"
#include "engine/sweep/sweep_collect.h"
#include "engine/sweep/sweep_extend.h"
#include "engine/sweep/sweep_path_policy.h"

namespace normlab::cli {

namespace {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

const char* kSweepHelp =
    "usage: normlab-cli sweep plan (FILE | NAME | --preset NAME | --config FILE) [--set KEY=VALUE]...\n"
    "                              [--axis KEY=V1,V2,...]... [--seeds N] [--steps N] --out S\n"
    "       normlab-cli sweep plan --command 'python train.py --lr {user.lr} --seed {seed}'\n"
    "                              --axis user.lr=1e-3,3e-3 [--seeds N] --out S\n"
    "       normlab-cli sweep run S [--jobs N] [--threads-per-job K] [--shard i/n] [--quiet]\n"
    "       normlab-cli sweep run-point S --point ID|INDEX [--threads K] [--quiet]\n"
    "       normlab-cli sweep status S [--json]\n"
    "       normlab-cli sweep collect S [--out DIR]\n"
    "       normlab-cli sweep extend S (--seeds N|A-B|a,b,c | --axis KEY=V1,V2,...)...\n"
    "       normlab-cli sweep edge (--preset NAME | --config FILE) [--set KEY=VALUE]... [--steps N]\n"
    "                              --axis KEY=LO:HI [--vary KEY=V1,V2,...] --criterion C [--seeds N]\n"
    "                              [--tolerance 5%] [--jobs N] [--threads-per-job K] [--json] --out S\n"
    "       normlab-cli sweep edge --command 'python train.py --lr {user.lr} --seed {seed}'\n"
    "                              --axis user.lr=LO:HI [--vary user.NAME=V1,V2,...] --criterion C\n"
    "                              [--seeds N] [--tolerance 5%] [--jobs N] --out S\n"
    "       normlab-cli sweep edge S [--jobs N] [--json]\n"
    "\n"
    "plan    expands a sweep file (or the grid given inline) into S/sweep.json: every point with a\n"
    "        stable id derived from its overrides; every point's config is checked first. NAME is a\n"
    "        sweep that ships: warmup-map, depth-map, lr-sensitivity, width-map. --command runs your\n"
    "        own script per point instead of NormLab's engine: axes user.NAME fill {user.NAME}, {seed}\n"
    "        the seed, {out} the point's folder (also in NORMLAB_RUN_DIR, where normlab.watch()\n"
    "        writes), each value single-quoted for /bin/sh; its output goes to the folder's command.log.\n"
    "run     runs the points not yet done, N at a time (default: one single-thread job per core),\n"
    "        each into S/runs/<id>/, a normal run folder. --shard i/n runs every n-th point (default\n"
    "        from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT). Safe to re-run or run from many\n"
    "        machines sharing S: finished points are skipped and a point is claimed by one worker\n"
    "        (S/claims/<id>.json, heartbeat; a claim silent for a minute is taken over).\n"
    "run-point  runs one point (for GNU parallel, job arrays, Kubernetes, Ray).\n"
    "status  done / running / diverged / failed / to do, per point and in total.\n"
    "collect writes DIR/points.csv (one row per point: overrides, status, losses, diverged at, wall\n"
    "        time) and DIR/lr_sensitivity.csv (Wortsman et al.'s learning-rate sensitivity per\n"
    "        combination of the other axes, when a train.lr axis exists); DIR defaults to S.\n"
    "extend  adds seeds (N: seeds 1..N) or values of an existing axis to S in place: every point\n"
    "        planned keeps its id, folder and result; run S again for the new ones.\n"
    "edge    bisects KEY (train.lr) in log space between LO (must train) and HI (must fail) for the\n"
    "        largest value that still trains, per variant (--vary) and seed, until the bracket's\n"
    "        ratio is at most 1 + tolerance; C is diverged, loss_above=X (final loss above X, or\n"
    "        diverged) or worse_than_best=F (final loss above F x the best of that seed's probes).\n"
    "        Each probe is a sweep point in S/searches/<variant>-s<seed>/; re-running the command,\n"
    "        `sweep edge S` or `sweep run S` continues. Reports each variant's edge (geometric mean\n"
    "        over seeds, 95% t interval), each seed's bracket and the paired edge ratio of each\n"
    "        variant to the first; S/edge_result.json holds it all. With --command each probe runs\n"
    "        your script (as sweep plan --command does) and KEY and --vary are its user.NAME values.\n"
    "\n"
    "A sweep file (docs/formats.md): {\"base\": {\"preset\": \"deep-postln\", \"set\": {\"train.steps\": "
    "600}},\n"
    "  \"axes\": {\"train.lr\": [1e-3, 3e-3]}, \"linked\": [{\"model.norm_placement\": [\"post\", \"pre\"],\n"
    "  \"label\": [\"Post-LN\", \"Pre-LN\"]}], \"seeds\": 2, \"steps\": 600}\n";

// "KEY=V1,V2,...": each value JSON when it reads as JSON (numbers, true), else a word.
std::pair<std::string, ojson> parse_axis(const std::string& text) {
    const size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == text.size())
        throw InputError("--axis " + text + ": write KEY=V1,V2,... (e.g. --axis train.lr=1e-3,3e-3)");
    return {text.substr(0, equals), values_from_text(text.substr(equals + 1))};
}

// A sweep file, or the name of one that ships (resources/sweeps/NAME.json: warmup-map, ...).
ojson read_sweep_file(const std::string& name) {
    const fs::path shipped = fs::path(resource_dir()) / "sweeps" / (name + ".json");
    const std::string path = !fs::exists(name) && fs::exists(shipped) ? shipped.string() : name;
    const std::optional<std::string> text = read_small_file_if_present(path, kMaxJsonFileBytes, "sweep file");
    if (!text) {
        std::string names;
        std::error_code ignored;
        for (const auto& entry : fs::directory_iterator(shipped.parent_path(), ignored))
            names += " " + entry.path().stem().string();
        throw InputError("cannot read sweep file " + name + "; the shipped sweeps are:" + names);
    }
    return parse_json<ojson>(*text, path);
}

int run_plan(ArgReader& reader) {
    ojson spec = ojson::object(), base = ojson::object(), set = ojson::object(), axes = ojson::object();
    std::string out;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--out")
            out = reader.value_of(flag);
        else if (flag == "--preset")
            base["preset"] = reader.value_of(flag);
        else if (flag == "--config")
            base["config"] = reader.value_of(flag);
        else if (flag == "--set") {
            const std::string assignment = reader.value_of(flag);
            const size_t equals = assignment.find('=');
            if (equals == std::string::npos) throw InputError("--set " + assignment + ": write KEY=VALUE");
            set[assignment.substr(0, equals)] = value_from_text(assignment.substr(equals + 1));
        } else if (flag == "--axis") {
            const auto [key, values] = parse_axis(reader.value_of(flag));
            axes[key] = values;
        } else if (flag == "--seeds")
            spec["seeds"] = reader.integer_of(flag, 1, 1000);
        else if (flag == "--steps")
            spec["steps"] = reader.integer_of(flag, 1);
        else if (flag == "--command")
            spec["command"] = reader.value_of(flag);
        else if (flag.rfind("--", 0) != 0 && spec.empty() && base.empty() && axes.empty())
            spec = read_sweep_file(flag);
        else
            throw InputError("unknown option '" + flag + "'; see normlab-cli sweep --help");
    }
    if (out.empty()) throw InputError("--out S is required: the sweep folder to plan into");
    // Inline flags add to (or stand in for) the file's own entries.
    if (!base.empty() || !set.empty()) {
        ojson& file_base = spec["base"];
        if (!file_base.is_object()) file_base = ojson::object();
        for (const auto& [key, value] : base.items()) file_base[key] = value;
        for (const auto& [key, value] : set.items()) file_base["set"][key] = value;
    }
    for (const auto& [key, values] : axes.items()) spec["axes"][key] = values;
    SweepPlan plan = plan_sweep(sweep_spec_from_json(spec));
    // Paths this user typed here are theirs to choose; a sweep file's must stay inside the sweep.
    for (const std::string& key : sweep_path_keys())
        if (set.contains(key) || axes.contains(key)) plan.paths_from_command_line.push_back(key);
    check_sweep_paths(plan, "sweep plan");
    write_sweep(out, plan);
    const std::string what = plan.spec.command
                                 ? " points of your command"
                                 : " points of " + std::to_string(plan.base.train.steps) + " steps";
    std::cout << "normlab-cli sweep plan: " << plan.points.size() << what << " in " << out
              << "/sweep.json; run them with: normlab-cli sweep run " << out << "\n";
    return 0;
}

int run_extend(ArgReader& reader) {
    if (reader.done()) throw InputError("name the sweep folder: normlab-cli sweep extend S --seeds N");
    const std::string dir = reader.take();
    SweepExtension extension;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--seeds") {
            for (uint64_t seed : parse_seed_list(reader.value_of(flag))) extension.seeds.push_back(seed);
        } else if (flag == "--axis") {
            extension.values.push_back(parse_axis(reader.value_of(flag)));
        } else {
            throw InputError("unknown option '" + flag + "'; see normlab-cli sweep --help");
        }
    }
    if (extension.seeds.empty() && extension.values.empty())
        throw InputError("sweep extend " + dir + ": give --seeds N|A-B|a,b,c or --axis KEY=V1,V2,...");
    std::string text;
    const SweepPlan plan = load_sweep(dir, &text);
    const SweepPlan extended = extend_sweep(plan, extension);
    write_extended_sweep(dir, text, extended);
    std::cout << "normlab-cli sweep extend: " << plan.points.size() << " -> " << extended.points.size()
              << " points in " << dir << "/sweep.json (the " << plan.points.size()
              << " planned keep their folders); run the new ones with: normlab-cli sweep run " << dir << "\n";
    return 0;
}

int run_status(ArgReader& reader) {
    if (reader.done()) throw InputError("name the sweep folder: normlab-cli sweep status S");
    const std::string dir = reader.take();
    bool json = false;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--json")
            json = true;
        else
            throw InputError("unknown option '" + flag + "'; see normlab-cli sweep --help");
    }
    const SweepPlan plan = load_sweep(dir);
    std::map<PointState, int> counts;
    ojson rows = ojson::array();
    for (const SweepPoint& point : plan.points) {
        const PointProgress progress = point_progress(dir, point);
        ++counts[progress.state];
        rows.push_back({{"index", point.index},
                        {"id", point.id},
                        {"state", to_string(progress.state)},
                        {"steps", progress.summary ? progress.summary->steps : 0}});
        if (!progress.error.empty()) rows.back()["error"] = progress.error;
    }
    if (json) {
        ojson totals = ojson::object();
        for (PointState state : {PointState::Completed, PointState::Running, PointState::Diverged,
                                 PointState::Failed, PointState::ToDo})
            totals[to_string(state)] = counts[state];
        std::cout << ojson{{"points", rows}, {"totals", totals}}.dump(2) << "\n";
        return 0;
    }
    for (const ojson& row : rows)
        std::printf(
            "%4d  %-48s %-9s %lld steps%s\n", row["index"].get<int>(), row["id"].get<std::string>().c_str(),
            row["state"].get<std::string>().c_str(), static_cast<long long>(row["steps"].get<int64_t>()),
            row.contains("error") ? ("  " + text_excerpt(row["error"].get<std::string>(), 200)).c_str() : "");
    std::printf("%zu points: %d done, %d running, %d diverged, %d failed, %d to do\n", plan.points.size(),
                counts[PointState::Completed], counts[PointState::Running], counts[PointState::Diverged],
                counts[PointState::Failed], counts[PointState::ToDo]);
    return 0;
}

// Written atomically: a failed write (a full disk) exits 2 and leaves the old table.
void write_csv(const fs::path& path, const std::function<void(std::ostream&)>& write) {
    write_file_atomically(path.string(), write, "cannot write " + path.string());
}

int run_collect(ArgReader& reader) {
    if (reader.done()) throw InputError("name the sweep folder: normlab-cli sweep collect S");
    const std::string dir = reader.take();
    std::string out = dir;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--out")
            out = reader.value_of(flag);
        else if (flag == "--csv")
            continue;  // CSV is what collect writes
        else
            throw InputError("unknown option '" + flag + "'; see normlab-cli sweep --help");
    }
    const SweepPlan plan = load_sweep(dir);
    const std::vector<CollectedPoint> points = collect_sweep(dir, plan);
    const std::vector<SensitivityRow> rows = lr_sensitivity(plan, points);
    write_csv(fs::path(out) / "points.csv",
              [&](std::ostream& file) { write_points_csv(plan, points, file); });
    std::cout << "normlab-cli sweep collect: " << points.size() << " points to "
              << (fs::path(out) / "points.csv").string() << "\n";
    if (rows.empty()) return 0;
    write_csv(fs::path(out) / "lr_sensitivity.csv",
              [&](std::ostream& file) { write_sensitivity_csv(plan, rows, file); });
    for (const SensitivityRow& row : rows) {
        std::string group;
        for (const std::string& label : row.group) group += (group.empty() ? "" : ", ") + label;
        if (!group.empty()) group += ":";  // no other axis: one row, nothing to name
        if (row.sensitivity)
            std::printf("  %slr sensitivity %.4f (best loss %.4f)\n",
                        (group + (group.empty() ? "" : " ")).c_str(), *row.sensitivity, *row.best);
        else
            std::printf("  %slr sensitivity: not every point has finished\n",
                        (group + (group.empty() ? "" : " ")).c_str());
    }
    return 0;
}
}  // namespace

int run_sweep(int argc, char** argv) {
    ArgReader reader(argc, argv, 2);
    if (reader.done() || reader.peek() == "--help" || reader.peek() == "-h") {
        std::cout << kSweepHelp;
        return reader.done() ? 2 : 0;
    }
    const std::string action = reader.take();
    if (action == "plan") return run_plan(reader);
    if (action == "run") return run_points(reader);
    if (action == "run-point") return run_one_point(reader);
    if (action == "status") return run_status(reader);
    if (action == "collect") return run_collect(reader);
    if (action == "extend") return run_extend(reader);
    if (action == "edge") return run_edge(reader);
    throw InputError("unknown sweep action '" + action +
                     "'; the actions are plan, run, run-point, status, collect, extend, edge");
}

}  // namespace normlab::cli
