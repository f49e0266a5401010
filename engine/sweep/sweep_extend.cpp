// Growing a sweep in place (sweep_extend.h).
#include "engine/sweep/sweep_extend.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/core/small_file.h"

namespace normlab {

namespace {
using ojson = nlohmann::ordered_json;

// Appends `more` to the key's axis, skipping values it has; the count added.
size_t add_axis_values(SweepSpec& spec, const std::string& key, const ojson& more) {
    const auto axis = std::find_if(spec.axes.begin(), spec.axes.end(), [&key](const SweepAxis& each) {
        return std::find(each.keys.begin(), each.keys.end(), key) != each.keys.end();
    });
    if (axis == spec.axes.end())
        throw InputError("--axis " + key +
                         ": the sweep has no such axis (a new axis would change every "
                         "point; plan a new sweep for it)");
    if (axis->keys.size() > 1 || !axis->labels.empty())
        throw InputError("--axis " + key +
                         ": a linked or labelled axis is extended in the sweep file; plan "
                         "a new sweep from it");
    size_t added = 0;
    for (const ojson& value : more) {
        std::vector<nlohmann::json>& values = axis->values.front();
        const bool known = std::any_of(values.begin(), values.end(), [&value](const nlohmann::json& each) {
            return each.dump() == value.dump();
        });
        if (!known) values.push_back(nlohmann::json::parse(value.dump())), ++added;
    }
    return added;
}
}  // namespace

SweepPlan extend_sweep(const SweepPlan& plan, const SweepExtension& extension) {
    SweepSpec spec = plan.spec;
    size_t added = 0;
    if (!extension.seeds.empty() && spec.seeds.empty()) spec.seeds.push_back(plan.base.train.seed);
    for (uint64_t seed : extension.seeds)
        if (std::find(spec.seeds.begin(), spec.seeds.end(), seed) == spec.seeds.end())
            spec.seeds.push_back(seed), ++added;
    for (const auto& [key, values] : extension.values) added += add_axis_values(spec, key, values);
    if (added == 0) throw InputError("the sweep already has every seed and value given: nothing to add");
    SweepPlan extended = plan_sweep(spec);
    extended.paths_from_command_line = plan.paths_from_command_line;
    std::map<std::string, const SweepPoint*> grown;
    for (const SweepPoint& point : extended.points) grown[point.id] = &point;
    for (const SweepPoint& point : plan.points) {  // ids are derived from values and seed: kept
        const auto found = grown.find(point.id);
        if (found == grown.end() || found->second->set.dump() != point.set.dump() ||
            found->second->seed != point.seed)
            throw InputError("extending the sweep would change its point " + point.id + "; plan a new sweep");
    }
    return extended;
}

void write_extended_sweep(const std::string& sweep_dir, const std::string& read_before,
                          const SweepPlan& extended) {
    const std::string file = (std::filesystem::path(sweep_dir) / "sweep.json").string();
    if (read_small_file(file, kMaxJsonFileBytes, "sweep file") != read_before)
        throw InputError(file +
                         " changed while it was being extended; look at it again (normlab-cli sweep "
                         "status) and extend again");
    write_file_atomically(file, sweep_plan_to_json(extended).dump(2) + "\n");
}

}  // namespace normlab
