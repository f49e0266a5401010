// Feeds a sweep file (`normlab-cli sweep plan FILE`) and, after a 0x1e byte, a typed value list as
// --axis takes it. Beyond no crash: only InputError escapes; a spec written and read again is the
// same spec, axes in the same order; a plan has one point per grid cell and seed, each with a unique,
// file-name-safe id and a valid config, and its sweep.json reads back to the same plan.
#include <optional>
#include <set>

#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/sweep/sweep_plan.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using normlab::fuzz::safe_file_name;

using normlab::InputError;
using normlab::SweepPlan;
using normlab::SweepSpec;
using ojson = nlohmann::ordered_json;

std::string axes_text(const SweepSpec& spec) {
    std::string text;
    for (const normlab::SweepAxis& axis : spec.axes) {
        text += axis.name() + ":";
        for (const auto& values : axis.values)
            for (const nlohmann::json& value : values) text += value.dump() + ",";
        for (const std::string& label : axis.labels) text += label + ";";
        text += "\n";
    }
    return text;
}

void check_spec_round_trip(const SweepSpec& spec) {
    const ojson written = normlab::sweep_spec_to_json(spec);
    SweepSpec again;
    try {
        again = normlab::sweep_spec_from_json(written);
    } catch (const InputError& error) {
        FUZZ_CHECK(false,
                   "a spec's own JSON is refused (" + std::string(error.what()) + "): " + written.dump());
    }
    FUZZ_CHECK(normlab::sweep_spec_to_json(again) == written,
               "spec round trip changed it: " + written.dump());
    FUZZ_CHECK(axes_text(again) == axes_text(spec), "spec round trip reordered the axes: " + written.dump());
}

void check_plan(const SweepPlan& plan) {
    size_t cells = plan.spec.seeds.empty() ? 1 : plan.spec.seeds.size();
    for (const normlab::SweepAxis& axis : plan.spec.axes) cells *= axis.size();
    FUZZ_CHECK(plan.points.size() == cells, "the plan's points are not one per grid cell and seed");
    std::set<std::string> ids;
    for (const normlab::SweepPoint& point : plan.points) {
        FUZZ_CHECK(safe_file_name(point.id), "point id '" + point.id + "' is not a safe folder name");
        FUZZ_CHECK(ids.insert(point.id).second, "point id '" + point.id + "' is planned twice");
        FUZZ_CHECK(point.labels.size() == plan.spec.axes.size(), "a point's labels are not one per axis");
    }
    const ojson written = normlab::sweep_plan_to_json(plan);
    SweepPlan again;
    try {
        again = normlab::sweep_plan_from_json(ojson::parse(written.dump()), "sweep.json");
    } catch (const InputError& error) {
        FUZZ_CHECK(false, "a plan's own sweep.json is refused: " + std::string(error.what()));
    }
    FUZZ_CHECK(normlab::sweep_plan_to_json(again) == written, "sweep.json round trip changed the plan");
}

void plan(const SweepSpec& spec) {
    if (spec.config_path) return;  // a base config file: the fuzzer would read files of this machine
    SweepPlan plan;
    try {
        plan = normlab::plan_sweep(spec);
    } catch (const InputError&) {
        return;
    }
    check_plan(plan);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<std::string> parts = normlab::fuzz::split_parts(normlab::fuzz::as_text(data, size), 2);
    if (parts.size() > 1) {
        for (const ojson& value : normlab::values_from_text(parts[1]))
            FUZZ_CHECK(!value.is_structured(), "a typed axis value became a list or an object");
    }
    // Parsed as `sweep plan FILE` parses it (parse_json: nesting beyond 64 levels is refused).
    const std::optional<ojson> parsed = normlab::parse_json_or_nothing<ojson>(parts[0]);
    if (!parsed) return 0;
    const ojson& json = *parsed;
    SweepSpec spec;
    try {
        spec = normlab::sweep_spec_from_json(json);
    } catch (const InputError&) {
        return 0;
    }
    FUZZ_CHECK(!json.contains("steps") || (spec.steps && json["steps"] == *spec.steps),
               "\"steps\" read as another number");
    check_spec_round_trip(spec);
    plan(spec);
    return 0;
}
