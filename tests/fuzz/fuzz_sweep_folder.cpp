// Feeds a sweep folder from another machine: the input's parts (cut at 0x1e) are S/sweep.json, then
// one point's summary.json, metrics.jsonl and claim, then a --shard text. Beyond no crash: only
// InputError escapes; a loaded plan's points have one label per axis and file-name-safe ids; collect,
// the sensitivity and both CSVs take every loaded plan; and the plan writes back to the same sweep.json.
#include <sstream>

#include "engine/core/errors.h"
#include "engine/sweep/sweep_collect.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using normlab::fuzz::safe_file_name;

namespace fs = std::filesystem;
using normlab::InputError;
using normlab::SweepPlan;

// One point's run folder and claim from parts 1-3 (only under a safe id: the harness writes nothing
// outside its scratch folder, whatever the plan says).
void write_point_files(const fs::path& sweep, const normlab::SweepPoint& point,
                       const std::vector<std::string>& parts) {
    if (!safe_file_name(point.id)) return;
    const fs::path run = fs::path(normlab::point_folder(sweep.string(), point));
    fs::create_directories(run);
    fs::create_directories(sweep / "claims");
    if (parts.size() > 1) normlab::fuzz::write_file(run / "summary.json", parts[1]);
    if (parts.size() > 2) normlab::fuzz::write_file(run / "metrics.jsonl", parts[2]);
    if (parts.size() > 3) normlab::fuzz::write_file(sweep / "claims" / (point.id + ".json"), parts[3]);
}

void check_plan(const SweepPlan& plan) {
    for (const normlab::SweepPoint& point : plan.points) {
        FUZZ_CHECK(safe_file_name(point.id), "loaded point id '" + point.id + "' is not a safe folder name");
        FUZZ_CHECK(point.labels.size() == plan.spec.axes.size(),
                   "a loaded point's labels are not one per axis");
    }
}

void collect(const fs::path& sweep, const SweepPlan& plan) {
    const std::vector<normlab::CollectedPoint> points = normlab::collect_sweep(sweep.string(), plan);
    FUZZ_CHECK(points.size() == plan.points.size(), "collect_sweep lost points");
    const std::vector<normlab::SensitivityRow> rows = normlab::lr_sensitivity(plan, points);
    for (const normlab::SensitivityRow& row : rows)
        FUZZ_CHECK(row.clamped.size() == row.lrs.size(), "a sensitivity row has a loss per lr");
    std::ostringstream csv;
    normlab::write_points_csv(plan, points, csv);
    normlab::write_sensitivity_csv(plan, rows, csv);
}

void check_rewrite(const fs::path& sweep, const SweepPlan& plan) {
    const fs::path again = sweep.parent_path() / "rewritten";
    normlab::write_sweep(again.string(), plan);
    const SweepPlan reread = normlab::load_sweep(again.string());
    FUZZ_CHECK(normlab::sweep_plan_to_json(reread) == normlab::sweep_plan_to_json(plan),
               "a loaded plan written back reads as another plan");
}

void check_shard(const std::string& text) {
    try {
        const normlab::Shard shard = normlab::parse_shard(text);
        FUZZ_CHECK(shard.index >= 0 && shard.index < shard.count, "a shard outside 0 <= i < n");
    } catch (const InputError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<std::string> parts = normlab::fuzz::split_parts(normlab::fuzz::as_text(data, size), 5);
    if (parts.size() > 4) check_shard(parts[4]);
    const fs::path sweep = normlab::fuzz::fresh_dir("sweep_folder") / "sweep";
    fs::create_directories(sweep);
    normlab::fuzz::write_file(sweep / "sweep.json", parts[0]);
    SweepPlan plan;
    try {
        plan = normlab::load_sweep(sweep.string());
    } catch (const InputError&) {
        return 0;
    }
    check_plan(plan);
    if (!plan.points.empty()) write_point_files(sweep, plan.points[size % plan.points.size()], parts);
    collect(sweep, plan);
    check_rewrite(sweep, plan);
    return 0;
}
