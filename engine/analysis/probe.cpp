// Implements the probes: gradients are averaged on the host per weight matrix (w_qkv, w_o, w_1, w_2 of
// every block); output changes compare host copies of block outputs before and after one step.
#include "engine/analysis/probe.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "engine/train/trainer.h"

namespace normlab {

namespace {
struct WeightAccumulator {
    int entry = -1;
    std::vector<double> sum;  // of gradients over batches
    double norm_sum = 0.0;    // of gradient norms over batches
};

double norm(const std::vector<float>& values) {
    double total = 0.0;
    for (float v : values) total += static_cast<double>(v) * v;
    return std::sqrt(total);
}

double relative_change(const std::vector<float>& before, const std::vector<float>& after) {
    double change = 0.0;
    double base = 0.0;
    for (size_t i = 0; i < before.size(); ++i) {
        const double delta = static_cast<double>(after[i]) - before[i];
        change += delta * delta;
        base += static_cast<double>(before[i]) * before[i];
    }
    return base > 0.0 ? std::sqrt(change / base) : 0.0;
}

nlohmann::json gradient_json(const GradientProbe& probe) {
    return {{"mean_norm", probe.mean_norm}, {"norm_of_mean", probe.norm_of_mean}};
}
}  // namespace

ProbeResult probe_at_init(Trainer& trainer, int batches) {
    Model& model = trainer.model();
    const Config& config = trainer.config();
    const ParamLayout& layout = model.layout();
    const size_t blocks = layout.blocks.size();
    std::vector<WeightAccumulator> weights(blocks * 4);
    for (size_t b = 0; b < blocks; ++b) {
        const BlockIndex& index = layout.blocks[b];
        const int entries[4] = {index.qkv_weight, index.out_weight, index.fc1_weight, index.fc2_weight};
        for (int w = 0; w < 4; ++w) {
            weights[b * 4 + w].entry = entries[w];
            weights[b * 4 + w].sum.assign(layout.entries[entries[w]].count, 0.0);
        }
    }

    ProbeResult result;
    result.batches = batches;
    result.blocks.assign(blocks, BlockProbe{});
    Batch batch;
    for (int k = 0; k < batches; ++k) {
        trainer.task().make_batch(Split::Train, static_cast<uint64_t>(k), config.train.batch_size,
                                  config.model.seq_len, batch);
        const ForwardStats stats = model.forward_backward(batch, true, true);
        result.loss += stats.loss / batches;
        for (size_t b = 0; b < blocks; ++b) {
            result.blocks[b].resid += stats.resid[b] / batches;
            result.blocks[b].resid_attn += stats.resid_attn[b] / batches;
            result.blocks[b].dependency_attn += stats.dependency[2 * b] / batches;
            result.blocks[b].dependency_ffn += stats.dependency[2 * b + 1] / batches;
        }
        for (WeightAccumulator& weight : weights) {
            if (!model.active(weight.entry)) continue;
            const std::vector<float> grad = model.read_entry(weight.entry, true);
            weight.norm_sum += norm(grad);
            for (size_t i = 0; i < grad.size(); ++i) weight.sum[i] += grad[i];
        }
    }
    for (size_t b = 0; b < blocks; ++b) {
        GradientProbe* probes[4] = {&result.blocks[b].w_qkv, &result.blocks[b].w_o, &result.blocks[b].w_1,
                                    &result.blocks[b].w_2};
        for (int w = 0; w < 4; ++w) {
            const WeightAccumulator& weight = weights[b * 4 + w];
            double mean_squares = 0.0;
            for (double value : weight.sum) mean_squares += (value / batches) * (value / batches);
            probes[w]->mean_norm = weight.norm_sum / batches;
            probes[w]->norm_of_mean = std::sqrt(mean_squares);
        }
    }
    return result;
}

OutputChange output_change_after_one_step(Trainer& trainer) {
    Model& model = trainer.model();
    const Config& config = trainer.config();
    Batch batch;
    trainer.task().make_batch(Split::Train, 0, config.train.batch_size, config.model.seq_len, batch);
    const size_t blocks = model.layout().blocks.size();
    auto outputs = [&] {
        model.forward_backward(batch, false, false);
        std::vector<std::vector<float>> all;
        for (size_t b = 0; b < blocks; ++b) all.push_back(model.read_block_output(static_cast<int>(b)));
        all.push_back(model.read_head_input());
        return all;
    };
    const auto before = outputs();
    trainer.step();
    const auto after = outputs();
    OutputChange change;
    for (size_t b = 0; b < blocks; ++b) change.per_block.push_back(relative_change(before[b], after[b]));
    change.model_output = relative_change(before.back(), after.back());
    return change;
}

nlohmann::json to_json(const ProbeResult& probe, const OutputChange* change) {
    nlohmann::json blocks = nlohmann::json::array();
    for (size_t b = 0; b < probe.blocks.size(); ++b) {
        const BlockProbe& block = probe.blocks[b];
        nlohmann::json entry = {
            {"block", b},
            {"resid", block.resid},
            {"resid_attn", block.resid_attn},
            {"dependency", {{"attn", block.dependency_attn}, {"ffn", block.dependency_ffn}}},
            {"grad",
             {{"w_qkv", gradient_json(block.w_qkv)},
              {"w_o", gradient_json(block.w_o)},
              {"w_1", gradient_json(block.w_1)},
              {"w_2", gradient_json(block.w_2)}}}};
        if (change) entry["output_change"] = change->per_block[b];
        blocks.push_back(std::move(entry));
    }
    nlohmann::json out = {{"batches", probe.batches}, {"loss", probe.loss}, {"blocks", std::move(blocks)}};
    if (change) out["output_change"] = change->model_output;
    return out;
}

}  // namespace normlab
