// Reading metrics and events lines back: a record written by to_json and read by MetricsLineParser
// writes the same JSON again (every field, decoder and encoder blocks, cross-attention fields, optional
// values), null reads as NaN and a missing field as 0, and malformed lines are InputErrors.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/core/errors.h"
#include "engine/io/metrics_line_parser.h"
#include "engine/io/record_fields.h"
#include "engine/io/records_json.h"
#include "engine/train/trainer.h"

namespace normlab {
namespace {

Config encoder_decoder_config() {
    Config config;
    config.model.d_model = 32;
    config.model.heads = 2;
    config.model.d_ff = 64;
    config.model.layers = 2;
    config.model.encoder_layers = 2;
    config.model.seq_len = 17;
    config.data.task = TaskKind::Copy;
    config.data.symbols = 8;
    config.train.steps = 10;
    config.telemetry.val_every = 5;
    config.threads = 1;
    return config;
}

TEST(RecordsJson, StepRecordsRoundTripEveryField) {
    Trainer trainer(encoder_decoder_config());
    int with_layers = 0, with_validation = 0;
    MetricsLineParser parser;
    for (int i = 0; i < 10; ++i) {
        const StepRecord& record = trainer.step().record;
        const nlohmann::json written = to_json(record);
        const StepRecord read = parser.parse(written.dump());
        EXPECT_EQ(to_json(read).dump(), written.dump());
        EXPECT_EQ(read.step, record.step);
        EXPECT_EQ(read.loss, record.loss);
        ASSERT_EQ(read.layers.size(), record.layers.size());
        ASSERT_EQ(read.encoder_layers.size(), record.encoder_layers.size());
        for (size_t b = 0; b < record.layers.size(); ++b) {
            EXPECT_TRUE(read.layers[b].has_cross);  // decoder blocks of an encoder-decoder
            EXPECT_EQ(read.layers[b].grad.w_cross_kv, record.layers[b].grad.w_cross_kv);
            EXPECT_EQ(read.layers[b].dependency_cross, record.layers[b].dependency_cross);
            EXPECT_EQ(read.layers[b].resid, record.layers[b].resid);
        }
        for (size_t b = 0; b < record.layers.size(); ++b) {  // Adam's: measured, written, read back
            EXPECT_TRUE(recorded(record.layers[b].adam_eps_fraction));
            EXPECT_EQ(read.layers[b].adam_eps_fraction, record.layers[b].adam_eps_fraction);
        }
        EXPECT_EQ(record.telemetry.has_value(), !record.layers.empty());  // logged steps carry both
        EXPECT_EQ(read.telemetry.has_value(), record.telemetry.has_value());
        if (record.telemetry) {
            EXPECT_EQ(read.telemetry->log_z_mean, record.telemetry->log_z_mean);
        }
        EXPECT_EQ(read.attn_head_max_logit, record.attn_head_max_logit);
        EXPECT_EQ(record.attn_head_max_logit.size(), record.layers.size() * 2);  // 2 heads per block
        with_layers += !record.layers.empty();
        with_validation += record.val_loss.has_value();
        EXPECT_EQ(read.val_loss.has_value(), record.val_loss.has_value());
    }
    EXPECT_GT(with_layers, 0);
    EXPECT_GT(with_validation, 0);
}

TEST(RecordsJson, NullIsNaNAndAMissingFieldIsNotRecorded) {
    const StepRecord read = MetricsLineParser().parse(
        R"({"step": 7, "loss": null, "log_z_mean": 1.5, "layers": [{"resid": 2.5, "grad": {"w_o": null}}]})");
    EXPECT_EQ(read.step, 7);
    EXPECT_TRUE(std::isnan(read.loss));
    EXPECT_EQ(read.lr, 0.0);
    EXPECT_FALSE(read.val_loss.has_value());
    ASSERT_EQ(read.layers.size(), 1u);
    EXPECT_EQ(read.layers[0].resid, 2.5);
    // null: measured and not finite (a NaN that is recorded); absent: not recorded, a NaN of its own.
    EXPECT_TRUE(std::isnan(read.layers[0].grad.w_o));
    EXPECT_TRUE(record_fields::recorded(read.layers[0].grad.w_o));
    // the step's measured scalars too (the bridge writes grad_norm and steps_per_s on logged steps only)
    for (const double absent :
         {read.layers[0].grad.w_qkv, read.layers[0].resid_attn, read.layers[0].dependency_ffn,
          read.telemetry->logit_max, read.grad_norm, read.steps_per_s, read.layers[0].contribution_attn}) {
        EXPECT_TRUE(std::isnan(absent));
        EXPECT_FALSE(record_fields::recorded(absent));
    }
    EXPECT_EQ(read.telemetry->log_z_mean, 1.5);
    EXPECT_FALSE(read.layers[0].has_cross);
    // Written again, what was not recorded stays out of the line and null stays null.
    const nlohmann::json again = to_json(read);
    EXPECT_EQ(again["layers"][0].dump(), R"({"grad":{"w_o":null},"resid":2.5})");
    EXPECT_FALSE(again.contains("logit_max"));
    EXPECT_FALSE(again.contains("grad_norm"));
    EXPECT_FALSE(again.contains("steps_per_s"));
    EXPECT_EQ(again["log_z_mean"], 1.5);
    // A block with nothing recorded stays a block (an empty object), so the next keeps its index.
    const StepRecord sparse =
        MetricsLineParser().parse(R"({"step": 1, "layers": [{"other": 1}, {"resid": 2}]})");
    const nlohmann::json written = to_json(sparse);
    EXPECT_EQ(written["layers"].dump(), R"([{},{"resid":2.0}])");
    EXPECT_EQ(MetricsLineParser().parse(written.dump()).layers[1].resid, 2.0);
}

TEST(RecordsJson, EventsRoundTrip) {
    Event event;
    event.step = 120;
    event.kind = "diverged";
    event.message = "loss is NaN";
    event.block = 3;
    const Event read = event_from_json(to_json(event));
    EXPECT_EQ(read.step, 120);
    EXPECT_EQ(read.kind, "diverged");
    EXPECT_EQ(read.message, "loss is NaN");
    EXPECT_EQ(read.block, 3);
    Event change;
    change.step = 100;
    change.kind = "change";
    change.key = "model.norm_placement";
    change.value = "\"pre\"";
    EXPECT_EQ(to_json(event_from_json(to_json(change))).dump(), to_json(change).dump());
    // The bridge writes a user's numeric value as a number: read as its JSON text, as NormLab's own are.
    EXPECT_EQ(event_from_json(nlohmann::json::parse(R"({"step": 3, "kind": "change", "value": 0.5})")).value,
              "0.5");
}

TEST(RecordsJson, MalformedLinesAreInputErrors) {
    MetricsLineParser parser;
    for (const char* bad :
         {R"([1, 2])", R"({"loss": 1.0})", R"({"step": "seven"})", R"({"step": 1, "loss": "x"})",
          R"({"step": 1, "layers": 3})", R"({"step": 1, "layers": [7]})", R"({"step": 2.5})",
          R"({"step": 1, "loss": 1.0)", "{\"step\": 1, \"x\": \"\xff\"}", ""}) {
        EXPECT_THROW(parser.parse(bad), InputError) << bad;
    }
    // The parser is usable again after a bad line, and a number written as an integer reads as one.
    EXPECT_EQ(parser.parse(R"({"step": 3, "loss": 2})").loss, 2.0);
    EXPECT_THROW(event_from_json(nlohmann::json::parse(R"({"kind": "change"})")), InputError);
}

}  // namespace
}  // namespace normlab
