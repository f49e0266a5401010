// Implements the probes: gradients are averaged on the host per weight matrix (w_qkv, w_o, w_1, w_2 of
// every block, plus cross-attention's and the encoder's); output changes compare host copies of block
// outputs before and after one step.
#include "engine/analysis/probe.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "engine/train/forward_telemetry.h"
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

namespace {
// The weight matrices probed per block, with where their result goes.
struct ProbedWeight {
    int entry;
    GradientProbe* result;
};

void add_block_weights(const BlockIndex& index, BlockProbe& block, std::vector<ProbedWeight>& out) {
    out.push_back({index.qkv_weight, &block.w_qkv});
    out.push_back({index.out_weight, &block.w_o});
    out.push_back({index.fc1_weight, &block.w_1});
    out.push_back({index.fc2_weight, &block.w_2});
    if (!block.has_cross) return;
    out.push_back({index.cross_q_weight, &block.w_cross_q});
    out.push_back({index.cross_kv_weight, &block.w_cross_kv});
    out.push_back({index.cross_out_weight, &block.w_cross_o});
}
// Adds one pass's share of a block's residual sums and dependency ratios to their mean over the batches.
void add_pass(const ForwardStats& stats, const SublayerSlots& slots, size_t block, bool encoder, int batches,
              BlockProbe& probe) {
    LayerTelemetry pass;
    copy_forward_stats(stats, slots, static_cast<int>(block), encoder, pass);
    probe.resid += pass.resid / batches;
    probe.resid_attn += pass.resid_attn / batches;
    probe.dependency_attn += pass.dependency_attn / batches;
    probe.dependency_ffn += pass.dependency_ffn / batches;
    probe.resid_cross += pass.resid_cross / batches;
    probe.dependency_cross += pass.dependency_cross / batches;
}
}  // namespace

ProbeResult probe_at_init(Trainer& trainer, int batches) {
    Model& model = trainer.model();
    const Config& config = trainer.config();
    const ParamLayout& layout = model.layout();
    const size_t blocks = layout.blocks.size();
    const size_t encoder_blocks = layout.encoder_blocks.size();
    const bool has_encoder = encoder_blocks > 0;

    ProbeResult result;
    result.batches = batches;
    result.blocks.assign(blocks, BlockProbe{});
    result.encoder_blocks.assign(encoder_blocks, BlockProbe{});
    std::vector<ProbedWeight> probed;
    for (size_t b = 0; b < blocks; ++b) {
        result.blocks[b].has_cross = has_encoder;
        add_block_weights(layout.blocks[b], result.blocks[b], probed);
    }
    for (size_t e = 0; e < encoder_blocks; ++e)
        add_block_weights(layout.encoder_blocks[e], result.encoder_blocks[e], probed);
    std::vector<WeightAccumulator> weights(probed.size());
    for (size_t w = 0; w < probed.size(); ++w) {
        weights[w].entry = probed[w].entry;
        weights[w].sum.assign(layout.entries[probed[w].entry].count, 0.0);
    }

    const SublayerSlots slots(model.config());
    Batch batch;
    for (int k = 0; k < batches; ++k) {
        trainer.task().make_batch(Split::Train, static_cast<uint64_t>(k), config.train.batch_size,
                                  config.model.seq_len, batch);
        const ForwardStats stats = model.forward_backward(batch, {.backward = true, .attention_stats = true});
        result.loss += stats.loss / batches;
        for (size_t b = 0; b < blocks; ++b) add_pass(stats, slots, b, false, batches, result.blocks[b]);
        for (size_t e = 0; e < encoder_blocks; ++e)
            add_pass(stats, slots, e, true, batches, result.encoder_blocks[e]);
        for (WeightAccumulator& weight : weights) {
            if (!model.active(weight.entry)) continue;
            const std::vector<float> grad = model.read_entry(weight.entry, true);
            weight.norm_sum += norm(grad);
            for (size_t i = 0; i < grad.size(); ++i) weight.sum[i] += grad[i];
        }
    }
    for (size_t w = 0; w < probed.size(); ++w) {
        const WeightAccumulator& weight = weights[w];
        double mean_squares = 0.0;
        for (double value : weight.sum) mean_squares += (value / batches) * (value / batches);
        probed[w].result->mean_norm = weight.norm_sum / batches;
        probed[w].result->norm_of_mean = std::sqrt(mean_squares);
    }
    return result;
}

OutputChange output_change_after_one_step(Trainer& trainer) {
    Model& model = trainer.model();
    const Config& config = trainer.config();
    Batch batch;
    trainer.task().make_batch(Split::Train, 0, config.train.batch_size, config.model.seq_len, batch);
    const size_t blocks = model.layout().blocks.size();
    const size_t encoder_blocks = model.layout().encoder_blocks.size();
    // decoder blocks, the head's input, then encoder blocks
    auto outputs = [&] {
        model.forward_backward(batch, {.backward = false});
        std::vector<std::vector<float>> all;
        for (size_t b = 0; b < blocks; ++b) all.push_back(model.read_block_output(static_cast<int>(b)));
        all.push_back(model.read_head_input());
        for (size_t e = 0; e < encoder_blocks; ++e)
            all.push_back(model.read_encoder_block_output(static_cast<int>(e)));
        return all;
    };
    const auto before = outputs();
    trainer.step();
    const auto after = outputs();
    OutputChange change;
    for (size_t b = 0; b < blocks; ++b) change.per_block.push_back(relative_change(before[b], after[b]));
    change.model_output = relative_change(before[blocks], after[blocks]);
    for (size_t e = 0; e < encoder_blocks; ++e) {
        change.per_encoder_block.push_back(relative_change(before[blocks + 1 + e], after[blocks + 1 + e]));
    }
    return change;
}

namespace {
nlohmann::json block_json(size_t index, const BlockProbe& block) {
    nlohmann::json entry = {{"block", index},
                            {"resid", block.resid},
                            {"resid_attn", block.resid_attn},
                            {"dependency", {{"attn", block.dependency_attn}, {"ffn", block.dependency_ffn}}},
                            {"grad",
                             {{"w_qkv", gradient_json(block.w_qkv)},
                              {"w_o", gradient_json(block.w_o)},
                              {"w_1", gradient_json(block.w_1)},
                              {"w_2", gradient_json(block.w_2)}}}};
    if (block.has_cross) {
        entry["resid_cross"] = block.resid_cross;
        entry["dependency"]["cross"] = block.dependency_cross;
        entry["grad"]["w_cross_q"] = gradient_json(block.w_cross_q);
        entry["grad"]["w_cross_kv"] = gradient_json(block.w_cross_kv);
        entry["grad"]["w_cross_o"] = gradient_json(block.w_cross_o);
    }
    return entry;
}
}  // namespace

nlohmann::json to_json(const ProbeResult& probe, const OutputChange* change) {
    nlohmann::json blocks = nlohmann::json::array();
    for (size_t b = 0; b < probe.blocks.size(); ++b) {
        nlohmann::json entry = block_json(b, probe.blocks[b]);
        if (change) entry["output_change"] = change->per_block[b];
        blocks.push_back(std::move(entry));
    }
    nlohmann::json out = {{"batches", probe.batches}, {"loss", probe.loss}, {"blocks", std::move(blocks)}};
    if (change) out["output_change"] = change->model_output;
    if (!probe.encoder_blocks.empty()) {
        nlohmann::json encoder = nlohmann::json::array();
        for (size_t e = 0; e < probe.encoder_blocks.size(); ++e) {
            nlohmann::json entry = block_json(e, probe.encoder_blocks[e]);
            if (change && e < change->per_encoder_block.size())
                entry["output_change"] = change->per_encoder_block[e];
            encoder.push_back(std::move(entry));
        }
        out["encoder"] = std::move(encoder);
    }
    return out;
}

}  // namespace normlab
