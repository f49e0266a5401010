// Averages probes over seeds field by field, and reads a block profile's shape (last/first, max/min),
// for `normlab-cli probe --seeds N`: the seed-averaged Figure 3 profiles of docs/science.md in one command.
#include "engine/analysis/probe_average.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace normlab {

namespace {
void add(GradientProbe& into, const GradientProbe& from, double weight) {
    into.mean_norm += weight * from.mean_norm;
    into.norm_of_mean += weight * from.norm_of_mean;
}

void add(BlockProbe& into, const BlockProbe& from, double weight) {
    into.resid += weight * from.resid;
    into.resid_attn += weight * from.resid_attn;
    add(into.w_qkv, from.w_qkv, weight);
    add(into.w_o, from.w_o, weight);
    add(into.w_1, from.w_1, weight);
    add(into.w_2, from.w_2, weight);
    into.dependency_attn += weight * from.dependency_attn;
    into.dependency_ffn += weight * from.dependency_ffn;
    into.has_cross = from.has_cross;
    into.resid_cross += weight * from.resid_cross;
    into.dependency_cross += weight * from.dependency_cross;
    add(into.w_cross_q, from.w_cross_q, weight);
    add(into.w_cross_kv, from.w_cross_kv, weight);
    add(into.w_cross_o, from.w_cross_o, weight);
}

void add_blocks(std::vector<BlockProbe>& into, const std::vector<BlockProbe>& from, double weight) {
    if (into.size() != from.size()) throw std::invalid_argument("probes of different block counts");
    for (size_t b = 0; b < into.size(); ++b) add(into[b], from[b], weight);
}

void add_values(std::vector<double>& into, const std::vector<double>& from, double weight) {
    if (into.size() != from.size()) throw std::invalid_argument("output changes of different block counts");
    for (size_t b = 0; b < into.size(); ++b) into[b] += weight * from[b];
}
}  // namespace

ProbeResult average_probes(const std::vector<ProbeResult>& probes) {
    if (probes.empty()) throw std::invalid_argument("no probes to average");
    const double weight = 1.0 / static_cast<double>(probes.size());
    ProbeResult mean;
    mean.batches = probes.front().batches;
    mean.blocks.resize(probes.front().blocks.size());
    mean.encoder_blocks.resize(probes.front().encoder_blocks.size());
    for (const ProbeResult& probe : probes) {
        mean.loss += weight * probe.loss;
        add_blocks(mean.blocks, probe.blocks, weight);
        add_blocks(mean.encoder_blocks, probe.encoder_blocks, weight);
    }
    return mean;
}

OutputChange average_output_changes(const std::vector<OutputChange>& changes) {
    if (changes.empty()) throw std::invalid_argument("no output changes to average");
    const double weight = 1.0 / static_cast<double>(changes.size());
    OutputChange mean;
    mean.per_block.resize(changes.front().per_block.size());
    mean.per_encoder_block.resize(changes.front().per_encoder_block.size());
    for (const OutputChange& change : changes) {
        add_values(mean.per_block, change.per_block, weight);
        add_values(mean.per_encoder_block, change.per_encoder_block, weight);
        mean.model_output += weight * change.model_output;
    }
    return mean;
}

ProfileShape w2_profile(const ProbeResult& probe) {
    ProfileShape shape;
    for (const BlockProbe& block : probe.blocks) shape.values.push_back(block.w_2.norm_of_mean);
    if (shape.values.empty()) return shape;
    const auto [low, high] = std::minmax_element(shape.values.begin(), shape.values.end());
    shape.last_over_first = shape.values.back() / shape.values.front();
    shape.max_over_min = *high / *low;
    return shape;
}

std::string describe(const ProfileShape& shape) {
    std::string text;
    char number[64];
    for (double value : shape.values) {
        std::snprintf(number, sizeof number, "%.3f ", value);
        text += number;
    }
    std::snprintf(number, sizeof number, "(last/first %.2f, max/min %.2f)", shape.last_over_first,
                  shape.max_over_min);
    return text + number;
}

}  // namespace normlab
