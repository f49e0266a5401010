// The architecture keys (docs/model.md#architecture-keys) beyond their gradients: which tensors the
// layout (and so the checkpoint) holds, that none is live, the tied head's summed gradient, the memory
// estimate of a gated FFN, a Llama-shaped run resumed from its checkpoint with every tensor, and the
// family name captions give each shape.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/config/architecture_family.h"
#include "engine/config/presets.h"
#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"
#include "engine/model/model.h"
#include "engine/train/live_changes.h"
#include "engine/train/trainer.h"
#include "tests/engine/model_test_support.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {

ModelConfig llama_like() {
    ModelConfig config = testing::tiny_model_config(2);
    config.norm_type = NormType::RmsNorm;
    config.bias = false;
    config.tie_embeddings = true;
    config.ffn = FeedForward::SwiGlu;
    config.position = Position::Rope;
    config.kv_heads = 1;
    return config;
}

bool has_entry_ending(const ParamLayout& layout, const std::string& suffix) {
    for (const ParamEntry& entry : layout.entries)
        if (entry.name.ends_with(suffix)) return true;
    return false;
}

TEST(ArchitectureLayout, KeysLeaveTensorsOutAndAddTheGates) {
    const ModelConfig config = llama_like();
    const ParamLayout layout = build_layout(config, 13);
    EXPECT_EQ(layout.head, layout.wte) << "the tied head is the token embedding";
    EXPECT_EQ(layout.find("head.weight"), -1);
    EXPECT_EQ(layout.wpe, -1);
    EXPECT_EQ(layout.find("wpe.weight"), -1);
    for (const char* bias :
         {"attn.qkv.bias", "attn.out.bias", "ffn.fc1.bias", "ffn.fc2.bias", "ffn.gate.bias"})
        EXPECT_FALSE(has_entry_ending(layout, bias)) << bias;
    const int gate = layout.find("blocks.1.ffn.gate.weight");
    ASSERT_GE(gate, 0);
    EXPECT_EQ(layout.blocks[1].gate_weight, gate);
    EXPECT_EQ(layout.entries[gate].shape, (std::vector<int64_t>{config.d_ff, config.d_model}));
    const ParamEntry& qkv = layout.entries[layout.blocks[0].qkv_weight];  // q, then one key and value head
    EXPECT_EQ(qkv.shape,
              (std::vector<int64_t>{config.d_model + 2 * (config.d_model / config.heads), config.d_model}));

    const ParamLayout today =
        build_layout(testing::tiny_model_config(2), 13);  // the defaults: nothing left out
    EXPECT_GE(today.find("head.weight"), 0);
    EXPECT_GE(today.find("wpe.weight"), 0);
    EXPECT_GE(today.find("blocks.0.ffn.fc1.bias"), 0);
    EXPECT_EQ(today.find("blocks.0.ffn.gate.weight"), -1);
}

// They change the tensors, so a run cannot switch them: a new run is needed (docs/model.md#live-changes).
TEST(ArchitectureLayout, TheKeysAreNotLive) {
    for (const char* key : {"model.bias", "model.tie_embeddings", "model.ffn", "model.position",
                            "model.rope_theta", "model.kv_heads"}) {
        EXPECT_FALSE(is_live_key(key)) << key;
        EXPECT_THROW(require_live_key(key), InputError) << key;
    }
}

// The tied matrix's gradient is the head's plus the embedding's of an untied twin with equal weights.
TEST(ArchitectureTiedHead, GradientIsTheSumOfHeadAndEmbedding) {
    ModelConfig untied_config = testing::tiny_model_config(2);
    ModelConfig tied_config = untied_config;
    tied_config.tie_embeddings = true;
    CpuBackend backend(1);
    const int vocab = 13;
    Model untied(untied_config, vocab, backend);
    Model tied(tied_config, vocab, backend);
    untied.initialize(3);
    testing::perturb_parameters(untied, 4);
    const ParamLayout& layout = untied.layout();
    untied.write_entry(layout.head, untied.read_entry(layout.wte));
    for (size_t i = 0; i < layout.entries.size(); ++i) {
        const int there = tied.layout().find(layout.entries[i].name);
        if (there >= 0) tied.write_entry(there, untied.read_entry(static_cast<int>(i)));
    }
    const Batch batch = testing::small_batch(vocab, 2, untied_config.seq_len, 5);
    const double untied_loss = untied.forward_backward(batch, {.backward = true}).loss;
    EXPECT_NEAR(tied.forward_backward(batch, {.backward = true}).loss, untied_loss, 1e-6);
    const std::vector<float> head = untied.read_entry(layout.head, true);
    const std::vector<float> embedding = untied.read_entry(layout.wte, true);
    const std::vector<float> shared = tied.read_entry(tied.layout().wte, true);
    ASSERT_EQ(shared.size(), head.size());
    for (size_t i = 0; i < shared.size(); ++i)
        EXPECT_NEAR(shared[i], head[i] + embedding[i], 1e-6f) << "element " << i;
}

// A gated FFN keeps its gate [n, d_ff] per FFN sub-layer and its gradient in the scratch, and adds the
// gate's parameters (x 5: parameters, gradients, two moments, updates).
TEST(ArchitectureMemory, EstimateCountsTheGate) {
    ModelConfig mlp = testing::tiny_model_config(3);
    ModelConfig gated = mlp;
    gated.ffn = FeedForward::GeGlu;
    const int vocab = 256, batch = 4, seq = 8;
    const size_t parameter_floats = build_layout(gated, vocab).total - build_layout(mlp, vocab).total;
    EXPECT_EQ(parameter_floats,
              static_cast<size_t>(mlp.layers) * (static_cast<size_t>(mlp.d_ff) * mlp.d_model + mlp.d_ff));
    const size_t activation_floats = static_cast<size_t>(mlp.layers + 1) * batch * seq * mlp.d_ff;
    EXPECT_EQ(
        estimate_training_bytes(gated, vocab, batch, seq) - estimate_training_bytes(mlp, vocab, batch, seq),
        (5 * parameter_floats + activation_floats) * sizeof(float));
}

// Every tensor (by its checkpoint name) and the next step's loss come back from a saved checkpoint.
// Grouped-query attention's projection is d + 2 kv_width rows (parameters x 5, and the qkv activations),
// and it keeps k and v repeated to every head (and their gradients): 2 n d floats each.
TEST(ArchitectureMemory, EstimateCountsGroupedQueryAttention) {
    ModelConfig heads = testing::tiny_model_config(3);
    ModelConfig grouped = heads;
    grouped.kv_heads = 1;
    const int vocab = 256, batch = 4, seq = 8;
    const size_t n = static_cast<size_t>(batch) * seq, d = heads.d_model;
    const size_t kv = d / 2;  // 2 heads on one key/value head
    const size_t fewer_parameters = build_layout(heads, vocab).total - build_layout(grouped, vocab).total;
    EXPECT_EQ(fewer_parameters, heads.layers * (2 * (d - kv) * d + 2 * (d - kv)));
    const size_t more_activations = heads.layers * (2 * n * d - 2 * n * (d - kv)) + 2 * n * d;
    EXPECT_EQ(estimate_training_bytes(grouped, vocab, batch, seq) + 5 * fewer_parameters * sizeof(float),
              estimate_training_bytes(heads, vocab, batch, seq) + more_activations * sizeof(float));
}

TEST(ArchitectureCheckpoint, LlamaShapedRunResumesExactly) {
    Config config = testing::small_model_config(16, 2, 8, 4, 10);
    config.model = llama_like();
    config.threads = 1;
    Trainer trainer(config);
    const double first = trainer.step().record.loss;
    for (int i = 0; i < 3; ++i) trainer.step();
    const testing::TestFolder folder;
    const std::string path = folder / "llama_resume.safetensors";
    save_checkpoint(trainer, path);
    auto resumed = load_checkpoint(path, {});
    const ParamLayout& layout = trainer.model().layout();
    ASSERT_EQ(resumed->model().layout().entries.size(), layout.entries.size());
    for (size_t i = 0; i < layout.entries.size(); ++i) {
        const int entry = resumed->model().layout().find(layout.entries[i].name);
        ASSERT_GE(entry, 0) << layout.entries[i].name;
        EXPECT_EQ(resumed->model().read_entry(entry), trainer.model().read_entry(static_cast<int>(i)))
            << layout.entries[i].name;
    }
    const double next = trainer.step().record.loss;
    EXPECT_EQ(resumed->step().record.loss, next);
    EXPECT_LT(next, first);
}

TEST(ArchitectureFamily, CaptionsNameTheShapeOfEachPreset) {
    EXPECT_EQ(architecture_family(preset_config("llama-small").model),
              "Llama-shaped (RoPE, SwiGLU, no biases, tied head, GQA 2/4)");
    EXPECT_EQ(architecture_family(preset_config("gpt2-shape").model),
              "GPT-2-shaped (learned positions, GELU MLP, biases, tied head)");
    EXPECT_EQ(architecture_family(preset_config("quickstart").model),
              "2020 model (learned positions, ReLU MLP, biases, untied head)");
    ModelConfig mixed = preset_config("quickstart").model;
    mixed.position = Position::Rope;  // RoPE on the 2020 model: neither family
    mixed.kv_heads = 1;
    EXPECT_EQ(architecture_family(mixed), "custom (RoPE, ReLU MLP, biases, untied head, multi-query)");
    EXPECT_EQ(architecture_family(preset_config("theory-preln").model), "Xiong et al.'s simplified model");
}

}  // namespace
}  // namespace normlab
