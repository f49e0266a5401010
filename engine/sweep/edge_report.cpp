// Edge reports (edge_report.h): estimates on the log scale, where a ratio of edges is a difference,
// turned back into values and ratios with exp() for the reader.
#include "engine/sweep/edge_report.h"

#include <cmath>
#include <cstdio>

namespace normlab {

namespace {
using ojson = nlohmann::ordered_json;

// log(last pass) per seed, or nothing (and `note` saying which seeds) unless every seed is bracketed.
std::optional<std::vector<double>> log_edges(const EdgeSpec& spec, const EdgeVariantReport& variant,
                                             std::string* note) {
    std::vector<double> logs;
    std::string below, above, probing;
    for (size_t i = 0; i < variant.seeds.size(); ++i) {
        const EdgeSearchState& state = variant.seeds[i];
        const std::string seed = " " + std::to_string(spec.seeds[i]);
        if (state.status == EdgeStatus::Bracketed) logs.push_back(std::log(*state.last_pass));
        if (state.status == EdgeStatus::BelowLow) below += seed;
        if (state.status == EdgeStatus::AboveHigh) above += seed;
        if (state.status == EdgeStatus::Probing) probing += seed;
    }
    if (!probing.empty()) *note = "still probing (seeds" + probing + ")";
    if (!below.empty())
        *note += std::string(note->empty() ? "" : "; ") + "the edge is below LO (LO fails) for seeds" +
                 below + ": lower LO";
    if (!above.empty())
        *note += std::string(note->empty() ? "" : "; ") + "the edge is above HI (HI trains) for seeds" +
                 above + ": raise HI";
    if (logs.size() != variant.seeds.size()) return std::nullopt;
    return logs;
}

ojson interval_json(const stats::Estimate& estimate) {
    ojson json = {{"value", std::exp(estimate.mean)}, {"n", estimate.n}, {"log_mean", estimate.mean}};
    json["log_sd"] = estimate.sd ? ojson(*estimate.sd) : ojson();
    json["ci95"] =
        estimate.ci ? ojson::array({std::exp(estimate.ci->low), std::exp(estimate.ci->high)}) : ojson();
    return json;
}

ojson optional_json(const std::optional<double>& value) {
    return value ? ojson(*value) : ojson();
}

ojson seed_json(uint64_t seed, const EdgeSearchState& state) {
    ojson probes = ojson::array();
    for (const JudgedProbe& probe : state.probes)
        probes.push_back({{"value", probe.value},
                          {"passed", probe.passed},
                          {"diverged", probe.result.diverged},
                          {"final_loss", optional_json(probe.result.final_loss)}});
    return {{"seed", seed},
            {"status", to_string(state.status)},
            {"last_pass", optional_json(state.last_pass)},
            {"first_fail", optional_json(state.first_fail)},
            {"probes", probes}};
}
}  // namespace

EdgeReport edge_report(const EdgeSpec& spec, const std::vector<EdgeSearchState>& states) {
    EdgeReport report;
    report.finished = true;
    const std::vector<std::string> labels = edge_variant_labels(spec);
    std::vector<std::optional<std::vector<double>>> logs;
    for (size_t v = 0; v < labels.size(); ++v) {
        EdgeVariantReport variant;
        variant.label = labels[v];
        for (size_t s = 0; s < spec.seeds.size(); ++s) {
            variant.seeds.push_back(states.at(v * spec.seeds.size() + s));
            report.finished = report.finished && variant.seeds.back().status != EdgeStatus::Probing;
        }
        logs.push_back(log_edges(spec, variant, &variant.note));
        if (logs.back()) variant.log_edge = stats::estimate_mean(*logs.back());
        report.variants.push_back(std::move(variant));
    }
    for (size_t v = 1; v < labels.size(); ++v)
        if (logs[0] && logs[v])
            report.ratios.push_back({labels[v], labels[0], stats::paired_difference(*logs[0], *logs[v])});
    return report;
}

ojson edge_report_to_json(const EdgeSpec& spec, const EdgeReport& report) {
    ojson variants = ojson::array();
    const std::vector<EdgeSearchRef> searches = edge_searches(spec);
    for (size_t v = 0; v < report.variants.size(); ++v) {
        const EdgeVariantReport& variant = report.variants[v];
        ojson seeds = ojson::array();
        for (size_t s = 0; s < variant.seeds.size(); ++s) {
            seeds.push_back(seed_json(spec.seeds[s], variant.seeds[s]));
            seeds.back()["folder"] = searches[v * spec.seeds.size() + s].folder;
        }
        variants.push_back({{"label", variant.label},
                            {"edge", variant.log_edge ? interval_json(*variant.log_edge) : ojson()},
                            {"note", variant.note},
                            {"seeds", seeds}});
    }
    ojson ratios = ojson::array();
    for (const EdgeRatio& ratio : report.ratios) {
        ojson json = {{"label", ratio.label}, {"reference", ratio.reference}};
        json.update(interval_json(ratio.log_ratio));
        ratios.push_back(json);
    }
    return {{"format", "normlab-edge-result"},
            {"version", 1},
            {"finished", report.finished},
            {"key", spec.key},
            {"criterion", to_string(spec.criterion)},
            {"tolerance", spec.bounds.tolerance},
            {"variants", variants},
            {"ratios", ratios}};
}

namespace {
// "[0.3782, 0.4473]" back on the value scale, or why there is none.
std::string interval_text(const stats::Estimate& estimate) {
    if (!estimate.ci) return "(no interval from " + std::to_string(estimate.n) + " seed)";
    char text[96];
    std::snprintf(text, sizeof text, "[%.4g, %.4g]", std::exp(estimate.ci->low), std::exp(estimate.ci->high));
    return text;
}
}  // namespace

std::string edge_variant_text(const EdgeVariantReport& variant) {
    if (!variant.log_edge) return variant.label + " no edge: " + variant.note;
    char edge[32];
    std::snprintf(edge, sizeof edge, "%.4g", std::exp(variant.log_edge->mean));
    return variant.label + " edge " + edge + " " + interval_text(*variant.log_edge) +
           " (95% t interval over " + std::to_string(variant.log_edge->n) +
           " seeds, geometric mean of last passes)";
}

std::string edge_ratio_text(const EdgeRatio& ratio) {
    char value[32];
    std::snprintf(value, sizeof value, "%.3f", std::exp(ratio.log_ratio.mean));
    return ratio.label + "/" + ratio.reference + " edge ratio " + value + " " +
           interval_text(ratio.log_ratio) + " (paired by seed, n = " + std::to_string(ratio.log_ratio.n) +
           ")";
}

}  // namespace normlab
