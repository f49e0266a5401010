// ForwardStats' field tables (engine/model/forward_stats.h) against what a pass fills: every row's list
// has its length on a telemetry step, a pass without attention statistics empties the telemetry lists
// and zeroes the stacks' scalars, and names are unique, as the GPU self-check's report needs.
#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/model/model.h"
#include "engine/model/sublayer_slots.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {

using namespace forward_fields;

ModelConfig encoder_decoder_config() {
    ModelConfig config = testing::tiny_model_config(3);
    config.encoder_layers = 2;
    return config;
}

// A telemetry step: forward only in fp32, then a training pass in bf16, which fills the precision lists.
TEST(ForwardStatsTables, EveryRowHasItsLengthOnATelemetryStep) {
    for (const auto& [config, precision] :
         {std::pair{testing::tiny_model_config(3), false}, std::pair{encoder_decoder_config(), false},
          std::pair{encoder_decoder_config(), true}}) {
        CpuBackend backend(1);
        const int vocab = 9;
        Model model(config, vocab, backend);
        model.initialize(2);
        if (precision) model.set_precision(NumberFormat::Bf16);
        const ForwardStats& stats = model.forward_backward(testing::small_batch(vocab, 2, 8, 4),
                                                           {.backward = precision, .attention_stats = true});
        for (const Stack& stack : kStacks) {
            const size_t blocks = static_cast<size_t>(stack_blocks(config, stack.mask));
            for (const BlockList& field : kBlockLists) {
                const bool filled = field.filled != Filled::kPrecisionSteps || precision;
                const size_t expected = !(field.stacks & stack.mask) || !filled ? 0
                                        : field.per_head ? blocks * static_cast<size_t>(config.heads)
                                                         : blocks;
                EXPECT_EQ(((stats.*stack.member).*field.member).size(), expected)
                    << stack.prefix << field.name << ", encoder layers " << config.encoder_layers;
            }
        }
        const size_t slots = static_cast<size_t>(SublayerSlots(config).count());
        for (const SublayerList& field : kSublayerLists)
            EXPECT_EQ((stats.sublayers.*field.member).size(), slots) << field.name;
        EXPECT_GT(stats.decoder.final_norm_scale_mean, 0.0);  // Pre-LN: a final norm
    }
}

TEST(ForwardStatsTables, APassWithoutAttentionStatisticsClearsTheTelemetryFields) {
    CpuBackend backend(1);
    const int vocab = 9;
    const ModelConfig config = encoder_decoder_config();
    Model model(config, vocab, backend);
    model.initialize(2);
    const Batch batch = testing::small_batch(vocab, 2, 8, 4);
    model.set_precision(NumberFormat::Bf16);  // fills every list, the precision ones included
    ASSERT_FALSE(model.forward_backward(batch, {.backward = true, .attention_stats = true})
                     .decoder.act_overflow.empty());
    const ForwardStats& stats = model.forward_backward(batch, {.backward = false});
    for (const Stack& stack : kStacks) {
        const StackStats& values = stats.*stack.member;
        for (const BlockList& field : kBlockLists) {
            const bool every_pass = field.filled == Filled::kEveryPass && (field.stacks & stack.mask);
            EXPECT_EQ((values.*field.member).empty(), !every_pass) << stack.prefix << field.name;
        }
        for (const StackScalar& field : kStackScalars)
            EXPECT_FALSE(recorded(values.*field.member)) << stack.prefix << field.name;
    }
    for (const SublayerList& field : kSublayerLists) EXPECT_TRUE((stats.sublayers.*field.member).empty());
}

TEST(ForwardStatsTables, NamesAreUnique) {
    std::set<std::string> names;
    size_t rows = 0;
    for (const Stack& stack : kStacks) {
        for (const BlockList& field : kBlockLists) {
            if (!(field.stacks & stack.mask)) continue;
            names.insert(stack.prefix + std::string(field.name));
            ++rows;
        }
        for (const StackScalar& field : kStackScalars) {
            if (!(field.stacks & stack.mask)) continue;
            names.insert(stack.prefix + std::string(field.name));
            ++rows;
        }
    }
    for (const SublayerList& field : kSublayerLists) names.insert(field.name);
    for (const PassScalar& field : kPassScalars) names.insert(field.name);
    rows += std::size(kSublayerLists) + std::size(kPassScalars);
    EXPECT_EQ(names.size(), rows);
}

}  // namespace
}  // namespace normlab
