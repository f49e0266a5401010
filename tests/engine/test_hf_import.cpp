// Hugging Face import and export without transformers (tests/parity/hf_parity.py has the numbers against
// it): config.json keys to NormLab keys, every refusal named at once, a config written back and read
// again, and the tensor table walked both ways (q/k/v split, GPT-2's transposes, a longer position table).
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/config/config_keys.h"
#include "engine/core/errors.h"
#include "engine/io/hf_config.h"
#include "engine/io/hf_weights.h"
#include "engine/model/model.h"
#include "engine/train/trainer.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {
using json = nlohmann::json;

json llama_json() {
    return json::parse(R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 300,
        "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 8, "hidden_act": "silu", "max_position_embeddings": 64,
        "rms_norm_eps": 1e-06, "rope_parameters": {"rope_theta": 500000.0, "rope_type": "default"},
        "attention_bias": false, "mlp_bias": false, "tie_word_embeddings": true, "attention_dropout": 0.0,
        "pretraining_tp": 1, "initializer_range": 0.02, "bos_token_id": 1, "eos_token_id": 2,
        "pad_token_id": null, "torch_dtype": "float32", "transformers_version": "5.24.0", "use_cache": true})");
}

Config apply(const HfModel& model) {
    Config config;
    for (const std::string& assignment : model.overrides) apply_override(config, assignment);
    validate(config);
    return config;
}

std::string refusal(const json& config, HfUse use = HfUse::Evaluate) {
    try {
        hf_model_from_json(config, "config.json", use);
    } catch (const InputError& error) {
        return error.what();
    }
    return "";
}

TEST(HfConfig, LlamaKeysBecomeNormLabKeys) {
    const HfModel model = hf_model_from_json(llama_json(), "config.json", HfUse::Train);
    EXPECT_EQ(model.family, HfFamily::Llama);
    const ModelConfig c = apply(model).model;
    EXPECT_EQ(c.d_model, 32);
    EXPECT_EQ(c.heads, 4);
    EXPECT_EQ(c.kv_heads, 2);
    EXPECT_EQ(c.layers, 2);
    EXPECT_EQ(c.d_ff, 48);
    EXPECT_EQ(c.seq_len, 64);
    EXPECT_EQ(c.vocab_size, 300);
    EXPECT_EQ(c.ffn, FeedForward::SwiGlu);
    EXPECT_EQ(c.position, Position::Rope);
    EXPECT_EQ(c.norm_type, NormType::RmsNorm);
    EXPECT_EQ(c.norm_placement, NormPlacement::Pre);
    EXPECT_DOUBLE_EQ(c.rope_theta, 500000.0);
    EXPECT_DOUBLE_EQ(c.norm_eps, 1e-6);
    EXPECT_FALSE(c.bias);
    EXPECT_TRUE(c.tie_embeddings);
}

TEST(HfConfig, OlderRopeThetaAndAbsentKeysTakeTransformersDefaults) {
    json config = llama_json();
    config.erase("rope_parameters");
    config["rope_theta"] = 10000.0;
    config.erase("tie_word_embeddings");  // LlamaConfig's default: untied
    config.erase("num_key_value_heads");  // default: every head its own
    const ModelConfig c = apply(hf_model_from_json(config, "config.json", HfUse::Train)).model;
    EXPECT_DOUBLE_EQ(c.rope_theta, 10000.0);
    EXPECT_FALSE(c.tie_embeddings);
    EXPECT_EQ(c.kv_heads, 4);
}

TEST(HfConfig, EveryUnbuildableKeyIsNamedAtOnce) {
    json config = llama_json();
    config["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
    config["sliding_window"] = 4096;
    config["mlp_bias"] = true;
    config["hidden_act"] = "tanh";
    const std::string text = refusal(config);
    for (const char* key :
         {"rope_scaling.rope_type", "rope_scaling.factor", "sliding_window", "mlp_bias", "hidden_act = tanh"})
        EXPECT_NE(text.find(key), std::string::npos) << key << " in: " << text;
    EXPECT_EQ(text.find("bos_token_id"), std::string::npos) << "bookkeeping is not refused: " << text;
}

TEST(HfConfig, DropoutIsRefusedForTrainingOnly) {
    json config = {{"model_type", "gpt2"}, {"n_embd", 32},      {"n_head", 4},      {"n_layer", 2},
                   {"n_positions", 16},    {"vocab_size", 300}, {"attn_pdrop", 0.1}};
    EXPECT_EQ(refusal(config, HfUse::Evaluate), "");
    EXPECT_NE(refusal(config, HfUse::Train).find("attn_pdrop = 0.1"), std::string::npos);
    const ModelConfig c = apply(hf_model_from_json(config, "config.json", HfUse::Evaluate)).model;
    EXPECT_EQ(c.d_ff, 128);  // n_inner absent: 4 n_embd
    EXPECT_EQ(c.activation, Activation::GeluTanh);
    EXPECT_TRUE(c.tie_embeddings);
    EXPECT_TRUE(c.bias);
    EXPECT_EQ(c.position, Position::Learned);
}

TEST(HfConfig, OtherModelTypesAreRefused) {
    json config = llama_json();
    config["model_type"] = "mistral";
    EXPECT_NE(refusal(config).find("model_type 'mistral'"), std::string::npos);
}

TEST(HfConfig, WrittenConfigReadsBackToTheSameModel) {
    for (const json& source : {llama_json(), json{{"model_type", "gpt2"},
                                                  {"n_embd", 48},
                                                  {"n_head", 6},
                                                  {"n_layer", 3},
                                                  {"n_positions", 20},
                                                  {"vocab_size", 260},
                                                  {"activation_function", "gelu"},
                                                  {"tie_word_embeddings", false}}}) {
        const Config first = apply(hf_model_from_json(source, "a", HfUse::Train));
        const json written = hf_config_json(first.model, first.model.vocab_size);
        const Config second = apply(hf_model_from_json(written, "b", HfUse::Train));
        EXPECT_EQ(config_to_json_text(first), config_to_json_text(second)) << written.dump();
    }
}

TEST(HfConfig, ExportRefusesModelsOfNeitherFamilyByKey) {
    ModelConfig model = testing::tiny_model_config(2);
    model.norm_placement = NormPlacement::Post;
    model.qk_norm = QkNorm::RmsNorm;
    try {
        hf_family_of(model);
        FAIL() << "a Post-LN model with QK-norm was taken for GPT-2";
    } catch (const InputError& error) {
        const std::string text = error.what();
        EXPECT_NE(text.find("model.norm_placement=post"), std::string::npos) << text;
        EXPECT_NE(text.find("model.qk_norm=rmsnorm"), std::string::npos) << text;
    }
}

// A model built from an imported config, its tensors out under Hugging Face names and back in: the
// values must come back bit for bit (so the table's splits and transposes are each other's inverse).
void expect_round_trip(const json& source, const std::vector<std::string>& expected_names) {
    const HfModel hf = hf_model_from_json(source, "config.json", HfUse::Evaluate);
    const Config config = apply(hf);
    CpuBackend backend(1);
    Model model(config.model, config.model.vocab_size, backend);
    model.initialize(5);
    const auto tensors = hf_tensors_of(model, hf.family, false);
    for (const std::string& name : expected_names) EXPECT_TRUE(tensors.count(name)) << name;
    SafetensorsFile file;
    for (const auto& [name, tensor] : tensors) file.tensors[name] = tensor;
    const SafetensorsFile back = normlab_tensors_from_hf(file, hf.family, model, "memory");
    const auto& entries = model.layout().entries;
    for (size_t i = 0; i < entries.size(); ++i) {
        if (!model.active(static_cast<int>(i))) continue;
        EXPECT_EQ(back.tensors.at(entries[i].name).data, model.read_entry(static_cast<int>(i)))
            << entries[i].name;
    }
}

TEST(HfWeights, LlamaTensorsRoundTripWithSplitQkv) {
    json config = llama_json();
    config["tie_word_embeddings"] = false;
    expect_round_trip(config,
                      {"model.layers.1.self_attn.k_proj.weight", "lm_head.weight", "model.norm.weight",
                       "model.layers.0.mlp.gate_proj.weight", "model.embed_tokens.weight"});
    const HfModel hf = hf_model_from_json(config, "config.json", HfUse::Evaluate);
    const ModelConfig model = apply(hf).model;
    const auto parts = hf_parts(HfFamily::Llama, model, "blocks.0.attn.qkv.weight", {32 + 2 * 16, 32});
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[0].rows, 32);
    EXPECT_EQ(parts[1].rows, 16);  // 2 kv heads of 8
    EXPECT_EQ(parts[2].name, "model.layers.0.self_attn.v_proj.weight");
}

TEST(HfWeights, Gpt2ConvWeightsAreTransposed) {
    const json config = {{"model_type", "gpt2"}, {"n_embd", 16},     {"n_head", 2},
                         {"n_layer", 1},         {"n_positions", 8}, {"vocab_size", 40}};
    expect_round_trip(
        config, {"transformer.h.0.attn.c_attn.weight", "transformer.wpe.weight", "transformer.ln_f.bias"});
    const HfModel hf = hf_model_from_json(config, "config.json", HfUse::Evaluate);
    const Config c = apply(hf);
    CpuBackend backend(1);
    Model model(c.model, 40, backend);
    model.initialize(1);
    const auto tensors = hf_tensors_of(model, hf.family, false);
    const LoadedTensor& conv = tensors.at("transformer.h.0.attn.c_attn.weight");
    EXPECT_EQ(conv.shape, (std::vector<int64_t>{16, 48}));  // [in, out]
    const std::vector<float> qkv = model.read_entry(model.layout().find("blocks.0.attn.qkv.weight"));
    EXPECT_EQ(conv.data[1 * 48 + 5], qkv[5 * 16 + 1]);  // HF [in 1, out 5] is NormLab's [row 5, column 1]
}

TEST(HfWeights, ProblemsAreNamedAndALongerPositionTableIsCut) {
    const json config = {{"model_type", "gpt2"}, {"n_embd", 16},     {"n_head", 2},
                         {"n_layer", 1},         {"n_positions", 8}, {"vocab_size", 40}};
    const HfModel hf = hf_model_from_json(config, "config.json", HfUse::Evaluate);
    const Config c = apply(hf);
    CpuBackend backend(1);
    Model model(c.model, 40, backend);
    model.initialize(2);
    auto tensors = hf_tensors_of(model, hf.family, false);
    SafetensorsFile file;
    for (const auto& [name, tensor] : tensors) file.tensors[name] = tensor;
    // 12 positions where the model has 8: the first 8 rows are taken.
    LoadedTensor& wpe = file.tensors["transformer.wpe.weight"];
    wpe.shape = {12, 16};
    wpe.data.resize(12 * 16, 9.0f);
    const SafetensorsFile cut = normlab_tensors_from_hf(file, hf.family, model, "memory");
    EXPECT_EQ(cut.tensors.at("wpe.weight").data, model.read_entry(model.layout().find("wpe.weight")));

    file.tensors.erase("transformer.h.0.mlp.c_fc.bias");
    file.tensors["transformer.h.0.ln_1.weight"].shape = {15};
    file.tensors["transformer.h.7.ln_1.weight"] = {{16}, std::vector<float>(16)};
    try {
        normlab_tensors_from_hf(file, hf.family, model, "model.safetensors");
        FAIL() << "a broken checkpoint was accepted";
    } catch (const InputError& error) {
        const std::string text = error.what();
        EXPECT_NE(text.find("missing transformer.h.0.mlp.c_fc.bias"), std::string::npos) << text;
        EXPECT_NE(text.find("transformer.h.0.ln_1.weight is [15]"), std::string::npos) << text;
        EXPECT_NE(text.find("transformer.h.7.ln_1.weight"), std::string::npos) << text;
    }
}

// An imported vocabulary larger than the data's gives the model rows no batch uses; a smaller one is
// refused by name, since the data's tokens would fall outside the embedding.
TEST(HfVocabulary, ModelVocabularyCoversTheData) {
    Config config;
    config.model = testing::tiny_model_config(1);
    config.train.steps = 1;
    config.train.batch_size = 2;
    config.threads = 1;
    config.model.vocab_size = 300;
    Trainer trainer(config);
    EXPECT_EQ(trainer.model().vocab(), 300);
    trainer.step();
    EXPECT_NEAR(trainer.last_loss(), std::log(300.0), 1.0);  // logits over all 300 rows at initialisation
    config.model.vocab_size = 100;
    try {
        Trainer small(config);
        FAIL() << "a vocabulary smaller than the text's 256 bytes was accepted";
    } catch (const InputError& error) {
        EXPECT_NE(
            std::string(error.what()).find("model.vocab_size = 100 is smaller than the text task's 256"),
            std::string::npos)
            << error.what();
    }
}

}  // namespace
}  // namespace normlab
