// mean_record: a running sum and count per value, so a value missing in one run (NaN, or an absent
// optional) is averaged over the others instead of dragging the mean towards 0.
#include "engine/analysis/record_mean.h"

#include <cmath>
#include <limits>

#include "engine/io/record_fields.h"

namespace normlab {

namespace {
// The mean of value(r) over the records where it is finite; NaN where none is, and not recorded
// (record_fields::kNotRecorded) where no record recorded it.
template <typename Value>
double mean_of(std::span<const StepRecord* const> records, Value value) {
    double sum = 0.0;
    int count = 0;
    bool recorded = false;
    for (const StepRecord* record : records) {
        const double v = value(*record);
        recorded = recorded || record_fields::recorded(v);
        if (std::isfinite(v)) sum += v, ++count;
    }
    if (count > 0) return sum / count;
    return recorded ? std::numeric_limits<double>::quiet_NaN() : record_fields::kNotRecorded;
}

// The mean of an optional value over the records that have it (absent when none has).
std::optional<double> mean_of_optional(std::span<const StepRecord* const> records,
                                       std::optional<double> StepRecord::*member) {
    bool any = false;
    for (const StepRecord* record : records) any = any || (record->*member).has_value();
    if (!any) return std::nullopt;
    return mean_of(records, [member](const StepRecord& record) {
        return (record.*member).value_or(std::numeric_limits<double>::quiet_NaN());
    });
}

// Block b of `stack` averaged over the records (each has the block).
LayerTelemetry mean_block(std::span<const StepRecord* const> records,
                          std::vector<LayerTelemetry> StepRecord::*stack, size_t b) {
    LayerTelemetry mean = (records.front()->*stack)[b];  // has_cross and the shape
    const auto block = [stack, b](const StepRecord& record) -> const LayerTelemetry& {
        return (record.*stack)[b];
    };
    for (const record_fields::LayerField& field : record_fields::kLayerFields)
        mean.*field.member = mean_of(records, [&](const StepRecord& r) { return block(r).*field.member; });
    for (const record_fields::GradField& field : record_fields::kGradFields)
        mean.grad.*field.member =
            mean_of(records, [&](const StepRecord& r) { return block(r).grad.*field.member; });
    for (const record_fields::SublayerGroup& group : record_fields::kSublayerGroups)
        for (const record_fields::SublayerField& field : group.fields)
            mean.*field.member =
                mean_of(records, [&](const StepRecord& r) { return block(r).*field.member; });
    return mean;
}

std::vector<LayerTelemetry> mean_stack(std::span<const StepRecord* const> records,
                                       std::vector<LayerTelemetry> StepRecord::*stack) {
    const size_t blocks = (records.front()->*stack).size();
    for (const StepRecord* record : records)
        if ((record->*stack).size() != blocks) return {};
    std::vector<LayerTelemetry> mean;
    mean.reserve(blocks);
    for (size_t b = 0; b < blocks; ++b) mean.push_back(mean_block(records, stack, b));
    return mean;
}

std::optional<StepTelemetry> mean_telemetry(std::span<const StepRecord* const> records) {
    std::optional<StepTelemetry> mean;
    for (const StepRecord* record : records)
        if (record->telemetry) mean = *record->telemetry;
    if (!mean) return std::nullopt;
    for (const record_fields::StepField& field : record_fields::kStepFields)
        mean.value().*field.member = mean_of(records, [&field](const StepRecord& r) {
            return r.telemetry ? *r.telemetry.*field.member : std::numeric_limits<double>::quiet_NaN();
        });
    return mean;
}

std::vector<double> mean_head_logits(std::span<const StepRecord* const> records) {
    const size_t heads = records.front()->attn_head_max_logit.size();
    for (const StepRecord* record : records)
        if (record->attn_head_max_logit.size() != heads) return {};
    std::vector<double> mean(heads);
    for (size_t h = 0; h < heads; ++h)
        mean[h] = mean_of(records, [h](const StepRecord& r) { return r.attn_head_max_logit[h]; });
    return mean;
}
}  // namespace

StepRecord mean_record(std::span<const StepRecord* const> records) {
    StepRecord mean;
    if (records.empty()) return mean;
    mean.step = records.front()->step;
    mean.loss = mean_of(records, [](const StepRecord& r) { return r.loss; });
    mean.lr = mean_of(records, [](const StepRecord& r) { return r.lr; });
    mean.grad_norm = mean_of(records, [](const StepRecord& r) { return r.grad_norm; });
    mean.steps_per_s = mean_of(records, [](const StepRecord& r) { return r.steps_per_s; });
    mean.accuracy = mean_of_optional(records, &StepRecord::accuracy);
    mean.val_loss = mean_of_optional(records, &StepRecord::val_loss);
    mean.val_accuracy = mean_of_optional(records, &StepRecord::val_accuracy);
    mean.val_loss_batch_stats = mean_of_optional(records, &StepRecord::val_loss_batch_stats);
    mean.layers = mean_stack(records, &StepRecord::layers);
    mean.encoder_layers = mean_stack(records, &StepRecord::encoder_layers);
    mean.telemetry = mean_telemetry(records);
    mean.attn_head_max_logit = mean_head_logits(records);
    return mean;
}

}  // namespace normlab
