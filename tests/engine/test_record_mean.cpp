// mean_record (a seed group's line): plain means of three hand-made records, values a run left out
// (NaN, absent optionals) averaged over the others, and per-block values only where depths agree.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/analysis/record_mean.h"
#include "engine/io/record_fields.h"

namespace normlab {
namespace {

StepRecord record(double loss, int blocks) {
    StepRecord r;
    r.step = 40;
    r.loss = loss;
    r.lr = 1e-3;
    r.grad_norm = 2.0 * loss;
    for (int b = 0; b < blocks; ++b) {
        LayerTelemetry layer;
        layer.resid = loss * (b + 1);
        layer.grad.w_qkv = 10.0 * loss;
        layer.attn_max_logit = loss + b;
        layer.dependency_ffn = 0.1 * loss;
        r.layers.push_back(layer);
    }
    return r;
}

StepRecord mean_of(const std::vector<StepRecord>& records) {
    std::vector<const StepRecord*> pointers;
    for (const StepRecord& r : records) pointers.push_back(&r);
    return mean_record(pointers);
}

TEST(RecordMean, AveragesEveryValue) {
    std::vector<StepRecord> records{record(1.0, 2), record(2.0, 2), record(6.0, 2)};
    records[0].telemetry = StepTelemetry{};
    records[0].telemetry->log_z_mean = 4.0;
    records[2].telemetry = StepTelemetry{};
    records[2].telemetry->log_z_mean = 8.0;
    const StepRecord mean = mean_of(records);
    EXPECT_EQ(mean.step, 40);
    EXPECT_DOUBLE_EQ(mean.loss, 3.0);
    EXPECT_DOUBLE_EQ(mean.grad_norm, 6.0);
    EXPECT_DOUBLE_EQ(mean.lr, 1e-3);
    ASSERT_EQ(mean.layers.size(), 2u);
    EXPECT_DOUBLE_EQ(mean.layers[1].resid, 6.0);
    EXPECT_DOUBLE_EQ(mean.layers[0].grad.w_qkv, 30.0);
    EXPECT_DOUBLE_EQ(mean.layers[1].attn_max_logit, 4.0);
    EXPECT_DOUBLE_EQ(mean.layers[0].dependency_ffn, 0.3);
    ASSERT_TRUE(mean.telemetry.has_value());
    EXPECT_DOUBLE_EQ(mean.telemetry->log_z_mean, 6.0);  // over the two records that have it
}

TEST(RecordMean, LeftOutValuesAreNotZeros) {
    std::vector<StepRecord> records{record(1.0, 1), record(3.0, 1), record(5.0, 1)};
    records[1].val_loss = 2.0;
    records[2].val_loss = 4.0;
    records[0].layers[0].attn_max_logit = std::nan("");  // not sampled by that run
    const StepRecord mean = mean_of(records);
    ASSERT_TRUE(mean.val_loss.has_value());
    EXPECT_DOUBLE_EQ(*mean.val_loss, 3.0);
    EXPECT_FALSE(mean.accuracy.has_value());
    EXPECT_FALSE(mean.telemetry.has_value());
    EXPECT_DOUBLE_EQ(mean.layers[0].attn_max_logit, 4.0);
    records[1].layers[0].attn_max_logit = records[2].layers[0].attn_max_logit = std::nan("");
    EXPECT_TRUE(std::isnan(mean_of(records).layers[0].attn_max_logit));
    EXPECT_TRUE(record_fields::recorded(mean_of(records).layers[0].attn_max_logit));  // measured, not finite
    // A field no run recorded stays not recorded in the mean (an empty cell, not a NaN value).
    for (StepRecord& each : records) each.layers[0].grad.norm1_out = record_fields::kNotRecorded;
    records[0].layers[0].grad.norm2_out = record_fields::kNotRecorded;
    const StepRecord sparse = mean_of(records);
    EXPECT_FALSE(record_fields::recorded(sparse.layers[0].grad.norm1_out));
    EXPECT_TRUE(std::isfinite(sparse.layers[0].grad.norm2_out));  // the other two runs recorded it
}

TEST(RecordMean, DepthsThatDisagreeHaveNoBlocks) {
    const StepRecord mean = mean_of({record(1.0, 2), record(3.0, 3)});
    EXPECT_DOUBLE_EQ(mean.loss, 2.0);
    EXPECT_TRUE(mean.layers.empty());
}

}  // namespace
}  // namespace normlab
