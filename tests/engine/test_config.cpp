// Tests of engine/config: defaults, parsing, --set overrides, the JSON round trip and every
// validate() rule, with the error messages checked for the key and the accepted values.
#include "engine/config/config.h"
#include "engine/config/config_diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/errors.h"

namespace normlab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The message of the InputError that `action` throws, or "" when it throws nothing.
std::string error_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

Config parse(const std::string& text) {
    return config_from_json_text(text, "test.json");
}

std::string parse_error(const std::string& text) {
    return error_of([&] { parse(text); });
}

std::string override_error(const std::string& assignment) {
    return error_of([&] {
        Config c;
        apply_override(c, assignment);
    });
}

std::string validate_error(const std::function<void(Config&)>& mutate) {
    Config c;
    mutate(c);
    return error_of([&] { validate(c); });
}

// Field-by-field, so a field missing from the key table shows up as a failed round trip.
void expect_same(const Config& a, const Config& b) {
    EXPECT_EQ(a.model.d_model, b.model.d_model);
    EXPECT_EQ(a.model.layers, b.model.layers);
    EXPECT_EQ(a.model.heads, b.model.heads);
    EXPECT_EQ(a.model.d_ff, b.model.d_ff);
    EXPECT_EQ(a.model.seq_len, b.model.seq_len);
    EXPECT_EQ(a.model.norm_placement, b.model.norm_placement);
    EXPECT_EQ(a.model.norm_type, b.model.norm_type);
    EXPECT_EQ(a.model.residual, b.model.residual);
    EXPECT_EQ(a.model.activation, b.model.activation);
    EXPECT_EQ(a.model.init, b.model.init);
    EXPECT_EQ(a.model.theory_mode, b.model.theory_mode);
    EXPECT_EQ(a.model.deepnorm_alpha, b.model.deepnorm_alpha);
    EXPECT_EQ(a.model.deepnorm_beta, b.model.deepnorm_beta);
    EXPECT_EQ(a.model.admin_init, b.model.admin_init);
    EXPECT_EQ(a.model.norm_eps, b.model.norm_eps);
    EXPECT_EQ(a.model.embedding_std, b.model.embedding_std);
    EXPECT_EQ(a.model.dyt_alpha, b.model.dyt_alpha);
    EXPECT_EQ(a.model.bn_momentum, b.model.bn_momentum);
    EXPECT_EQ(a.model.qk_norm, b.model.qk_norm);
    EXPECT_EQ(a.model.mix_post_fraction, b.model.mix_post_fraction);
    EXPECT_EQ(a.model.norm_gain_warmup_steps, b.model.norm_gain_warmup_steps);
    EXPECT_EQ(a.model.norm_gain_warmup_start, b.model.norm_gain_warmup_start);
    EXPECT_EQ(a.model.residual_warmup_steps, b.model.residual_warmup_steps);
    EXPECT_EQ(a.model.denseformer_dilation, b.model.denseformer_dilation);
    EXPECT_EQ(a.model.bias, b.model.bias);
    EXPECT_EQ(a.model.tie_embeddings, b.model.tie_embeddings);
    EXPECT_EQ(a.model.ffn, b.model.ffn);
    EXPECT_EQ(a.model.position, b.model.position);
    EXPECT_EQ(a.model.rope_theta, b.model.rope_theta);
    EXPECT_EQ(a.model.kv_heads, b.model.kv_heads);
    EXPECT_EQ(a.model.vocab_size, b.model.vocab_size);
    EXPECT_EQ(a.train.optimizer, b.train.optimizer);
    EXPECT_EQ(a.train.lr, b.train.lr);
    EXPECT_EQ(a.train.warmup_steps, b.train.warmup_steps);
    EXPECT_EQ(a.train.schedule, b.train.schedule);
    EXPECT_EQ(a.train.clip_grad_norm, b.train.clip_grad_norm);
    EXPECT_EQ(a.train.batch_size, b.train.batch_size);
    EXPECT_EQ(a.train.steps, b.train.steps);
    EXPECT_EQ(a.train.seed, b.train.seed);
    EXPECT_EQ(a.train.beta1, b.train.beta1);
    EXPECT_EQ(a.train.beta2, b.train.beta2);
    EXPECT_EQ(a.train.eps, b.train.eps);
    EXPECT_EQ(a.train.weight_decay, b.train.weight_decay);
    EXPECT_EQ(a.train.weight_decay_mode, b.train.weight_decay_mode);
    EXPECT_EQ(a.train.z_loss, b.train.z_loss);
    EXPECT_EQ(a.train.precision, b.train.precision);
    EXPECT_EQ(a.train.loss_scale, b.train.loss_scale);
    EXPECT_EQ(a.train.momentum, b.train.momentum);
    EXPECT_EQ(a.train.min_lr_ratio, b.train.min_lr_ratio);
    EXPECT_EQ(a.train.diverge_loss, b.train.diverge_loss);
    EXPECT_EQ(a.train.checkpoint_every, b.train.checkpoint_every);
    EXPECT_EQ(a.train.checkpoint_keep, b.train.checkpoint_keep);
    EXPECT_EQ(a.data.task, b.data.task);
    EXPECT_EQ(a.data.text_path, b.data.text_path);
    EXPECT_EQ(a.data.val_fraction, b.data.val_fraction);
    EXPECT_EQ(a.data.symbols, b.data.symbols);
    EXPECT_EQ(a.data.modulus, b.data.modulus);
    EXPECT_EQ(a.telemetry.every, b.telemetry.every);
    EXPECT_EQ(a.telemetry.val_every, b.telemetry.val_every);
    EXPECT_EQ(a.telemetry.val_batches, b.telemetry.val_batches);
    EXPECT_EQ(a.telemetry.spike_window, b.telemetry.spike_window);
    EXPECT_EQ(a.telemetry.spike_z, b.telemetry.spike_z);
    EXPECT_EQ(a.device, b.device);
    EXPECT_EQ(a.threads, b.threads);
}

// A valid config where every field differs from its default.
Config non_default_config() {
    Config c;
    c.model = {96,
               12,
               3,
               8,
               384,
               48,
               NormPlacement::Peri,
               NormType::DyT,
               Residual::Admin,
               Activation::Gelu,
               InitScheme::Gpt2,
               true,
               1.5,
               0.25,
               AdminInit::Profiled,
               1e-6,
               0.5,
               1.0,
               0.25,
               QkNorm::RmsNorm,
               0.5,
               200,
               0.2,
               25,
               3,
               false,
               true,
               FeedForward::SwiGlu,
               Position::Rope,
               500000.0,
               4,
               512,
               Parametrization::Mup,
               48,
               6};
    c.train.optimizer = OptimizerKind::AdamW;
    c.train.weight_decay_mode = WeightDecayMode::Independent;
    c.train.z_loss = 1e-4;
    c.train.precision = NumberFormat::Bf16;
    c.train.loss_scale = "dynamic:1024";
    c.train.lr = 3e-4;
    c.train.warmup_steps = 100;
    c.train.schedule = ScheduleKind::InverseSqrt;
    c.train.clip_grad_norm = 1.0;
    c.train.batch_size = 8;
    c.train.steps = 1234;
    c.train.seed = 18446744073709551615ULL;
    c.train.beta1 = 0.8;
    c.train.beta2 = 0.999;
    c.train.eps = 1e-6;
    c.train.weight_decay = 0.01;
    c.train.momentum = 0.5;
    c.train.min_lr_ratio = 0.1;
    c.train.diverge_loss = 5.0;
    c.train.checkpoint_every = 50;
    c.train.checkpoint_keep = 4;
    c.data = {TaskKind::ModAdd, "corpus/é.txt", "bpe:300", 0.2, 10, 113};
    c.telemetry = {5, 10, 2, 20, 4.5};
    c.device = "cuda";
    c.threads = 3;
    return c;
}

TEST(ConfigDefaults, MatchTheHeader) {
    const Config c;
    EXPECT_EQ(c.model.d_model, 64);
    EXPECT_EQ(c.model.layers, 6);
    EXPECT_EQ(c.model.norm_placement, NormPlacement::Pre);
    EXPECT_EQ(c.train.optimizer, OptimizerKind::Adam);
    EXPECT_EQ(c.train.lr, 1e-3);
    EXPECT_EQ(c.train.seed, 1u);
    EXPECT_EQ(c.data.task, TaskKind::Text);
    EXPECT_EQ(c.device, "auto");
    EXPECT_NO_THROW(validate(c));
}

TEST(ConfigDefaults, EmptyDocumentIsAllDefaults) {
    expect_same(parse("{}"), Config{});
}

TEST(ConfigKeys, AllKeysInDeclarationOrder) {
    const std::vector<std::string> expected = {"model.d_model",
                                               "model.layers",
                                               "model.encoder_layers",
                                               "model.heads",
                                               "model.d_ff",
                                               "model.seq_len",
                                               "model.norm_placement",
                                               "model.norm_type",
                                               "model.residual",
                                               "model.activation",
                                               "model.init",
                                               "model.theory_mode",
                                               "model.deepnorm_alpha",
                                               "model.deepnorm_beta",
                                               "model.admin_init",
                                               "model.norm_eps",
                                               "model.embedding_std",
                                               "model.dyt_alpha",
                                               "model.bn_momentum",
                                               "model.qk_norm",
                                               "model.mix_post_fraction",
                                               "model.norm_gain_warmup_steps",
                                               "model.norm_gain_warmup_start",
                                               "model.residual_warmup_steps",
                                               "model.denseformer_dilation",
                                               "model.bias",
                                               "model.tie_embeddings",
                                               "model.ffn",
                                               "model.position",
                                               "model.rope_theta",
                                               "model.kv_heads",
                                               "model.vocab_size",
                                               "model.parametrization",
                                               "model.base_width",
                                               "model.base_depth",
                                               "train.optimizer",
                                               "train.lr",
                                               "train.warmup_steps",
                                               "train.schedule",
                                               "train.clip_grad_norm",
                                               "train.batch_size",
                                               "train.steps",
                                               "train.seed",
                                               "train.beta1",
                                               "train.beta2",
                                               "train.eps",
                                               "train.weight_decay",
                                               "train.weight_decay_mode",
                                               "train.z_loss",
                                               "train.precision",
                                               "train.loss_scale",
                                               "train.momentum",
                                               "train.min_lr_ratio",
                                               "train.diverge_loss",
                                               "train.checkpoint_every",
                                               "train.checkpoint_keep",
                                               "data.task",
                                               "data.text_path",
                                               "data.tokenizer",
                                               "data.val_fraction",
                                               "data.symbols",
                                               "data.modulus",
                                               "telemetry.every",
                                               "telemetry.val_every",
                                               "telemetry.val_batches",
                                               "telemetry.spike_window",
                                               "telemetry.spike_z",
                                               "device",
                                               "threads"};
    EXPECT_EQ(config_keys(), expected);
}

TEST(ConfigParse, PartialDocumentKeepsDefaultsElsewhere) {
    const Config c =
        parse(R"({"model": {"d_model": 128, "heads": 8}, "train": {"lr": 0.01}, "device": "cpu"})");
    Config expected;
    expected.model.d_model = 128;
    expected.model.heads = 8;
    expected.train.lr = 0.01;
    expected.device = "cpu";
    expect_same(c, expected);
}

TEST(ConfigParse, CommentsAndIntegralFloatsAreAccepted) {
    const Config c = parse("{\n  // a comment\n  \"model\": {\"layers\": 12.0, \"d_ff\": 1e3}\n}");
    EXPECT_EQ(c.model.layers, 12);
    EXPECT_EQ(c.model.d_ff, 1000);
}

TEST(ConfigParse, EachEnumValue) {
    auto get = [](const std::string& key, const std::string& value) {
        const std::string section = key.substr(0, key.find('.'));
        const std::string field = key.substr(key.find('.') + 1);
        return parse("{\"" + section + "\": {\"" + field + "\": \"" + value + "\"}}");
    };
    EXPECT_EQ(get("model.norm_placement", "post").model.norm_placement, NormPlacement::Post);
    EXPECT_EQ(get("model.norm_placement", "pre").model.norm_placement, NormPlacement::Pre);
    EXPECT_EQ(get("model.norm_placement", "peri").model.norm_placement, NormPlacement::Peri);
    EXPECT_EQ(get("model.norm_placement", "none").model.norm_placement, NormPlacement::None);
    EXPECT_EQ(get("model.norm_type", "layernorm").model.norm_type, NormType::LayerNorm);
    EXPECT_EQ(get("model.norm_type", "rmsnorm").model.norm_type, NormType::RmsNorm);
    EXPECT_EQ(get("model.norm_type", "dyt").model.norm_type, NormType::DyT);
    EXPECT_EQ(get("model.residual", "plain").model.residual, Residual::Plain);
    EXPECT_EQ(get("model.residual", "deepnorm").model.residual, Residual::DeepNorm);
    EXPECT_EQ(get("model.residual", "rezero").model.residual, Residual::ReZero);
    EXPECT_EQ(get("model.residual", "admin").model.residual, Residual::Admin);
    EXPECT_EQ(get("model.activation", "relu").model.activation, Activation::Relu);
    EXPECT_EQ(get("model.activation", "gelu").model.activation, Activation::Gelu);
    EXPECT_EQ(get("model.activation", "gelu_tanh").model.activation, Activation::GeluTanh);
    EXPECT_EQ(get("model.init", "xavier_normal").model.init, InitScheme::XavierNormal);
    EXPECT_EQ(get("model.init", "xavier_uniform").model.init, InitScheme::XavierUniform);
    EXPECT_EQ(get("model.init", "gpt2").model.init, InitScheme::Gpt2);
    EXPECT_EQ(get("model.admin_init", "closed").model.admin_init, AdminInit::Closed);
    EXPECT_EQ(get("model.admin_init", "profiled").model.admin_init, AdminInit::Profiled);
    EXPECT_EQ(get("train.optimizer", "sgd").train.optimizer, OptimizerKind::Sgd);
    EXPECT_EQ(get("train.optimizer", "adam").train.optimizer, OptimizerKind::Adam);
    EXPECT_EQ(get("train.optimizer", "adamw").train.optimizer, OptimizerKind::AdamW);
    EXPECT_EQ(get("train.optimizer", "radam").train.optimizer, OptimizerKind::RAdam);
    EXPECT_EQ(get("train.schedule", "constant").train.schedule, ScheduleKind::Constant);
    EXPECT_EQ(get("train.schedule", "linear").train.schedule, ScheduleKind::Linear);
    EXPECT_EQ(get("train.schedule", "inverse_sqrt").train.schedule, ScheduleKind::InverseSqrt);
    EXPECT_EQ(get("train.schedule", "cosine").train.schedule, ScheduleKind::Cosine);
    EXPECT_EQ(get("train.schedule", "noam").train.schedule, ScheduleKind::Noam);
    for (const std::string task : {"text", "copy", "reverse", "sort", "modadd"}) {
        EXPECT_EQ(to_string(get("data.task", task).data.task), task);
    }
    for (const std::string device : {"auto", "cpu", "cuda"}) {
        EXPECT_EQ(parse("{\"device\": \"" + device + "\"}").device, device);
    }
}

TEST(ConfigParse, ToStringNamesEveryEnumValue) {
    EXPECT_EQ(to_string(NormPlacement::None), "none");
    EXPECT_EQ(to_string(NormType::RmsNorm), "rmsnorm");
    EXPECT_EQ(to_string(Residual::DeepNorm), "deepnorm");
    EXPECT_EQ(to_string(Activation::Gelu), "gelu");
    EXPECT_EQ(to_string(Activation::GeluTanh), "gelu_tanh");
    EXPECT_EQ(to_string(InitScheme::XavierUniform), "xavier_uniform");
    EXPECT_EQ(to_string(AdminInit::Profiled), "profiled");
    EXPECT_EQ(to_string(OptimizerKind::AdamW), "adamw");
    EXPECT_EQ(to_string(ScheduleKind::InverseSqrt), "inverse_sqrt");
}

TEST(ConfigParse, MalformedJsonNamesSourceAndPosition) {
    const std::string message = parse_error("{\n  \"model\": {\"d_model\": 64,}\n}");
    EXPECT_THAT(message, HasSubstr("test.json"));
    EXPECT_THAT(message, HasSubstr("line 2"));
    EXPECT_THAT(message, HasSubstr("fix the JSON syntax"));
    EXPECT_THAT(parse_error(""), HasSubstr("fix the JSON syntax"));
    EXPECT_THAT(parse_error(R"({"train": {"lr": 1e999}})"), HasSubstr("number overflow"));
}

TEST(ConfigParse, TopLevelMustBeAnObject) {
    EXPECT_THAT(parse_error("[1, 2]"), HasSubstr("must be a JSON object"));
    EXPECT_THAT(parse_error(R"({"model": 5})"), HasSubstr("'model' is a section"));
}

TEST(ConfigParse, UnknownKeySuggestsTheClosest) {
    const std::string message = parse_error(R"({"model": {"d_modle": 64}})");
    EXPECT_THAT(message, HasSubstr("test.json"));
    EXPECT_THAT(message, HasSubstr("unknown config key 'model.d_modle'"));
    EXPECT_THAT(message, HasSubstr("did you mean 'model.d_model'?"));
    EXPECT_THAT(message, HasSubstr("normlab-cli train --help"));
    EXPECT_THAT(parse_error(R"({"modle": {"layers": 3}})"), HasSubstr("did you mean 'model.layers'?"));
    EXPECT_THAT(parse_error(R"({"lr": 0.1})"), HasSubstr("did you mean 'train.lr'?"));
    EXPECT_THAT(parse_error(R"({"model": {"heads": 4, "x": {"y": 1}}})"), HasSubstr("'model.x'"));
    const std::string far = parse_error(R"({"completely_unrelated": 1})");
    EXPECT_THAT(far, HasSubstr("unknown config key 'completely_unrelated'"));
    EXPECT_THAT(far, Not(HasSubstr("did you mean")));
}

// A value outside a key's choices lists them and names the closest (case-insensitive), when one is close.
TEST(ConfigParse, UnknownChoiceSuggestsTheClosest) {
    const std::string typo = parse_error(R"({"model": {"residual": "attnres"}})");
    EXPECT_THAT(typo, HasSubstr("expects one of plain|deepnorm"));
    EXPECT_THAT(typo, HasSubstr("got \"attnres\" (did you mean 'attn_res'?)"));
    EXPECT_THAT(parse_error(R"({"model": {"norm_type": "RMSNorm"}})"), HasSubstr("did you mean 'rmsnorm'?"));
    EXPECT_THAT(parse_error(R"({"model": {"residual": "zzz"}})"), Not(HasSubstr("did you mean")));
}

TEST(ConfigParse, WrongTypesNameKeyExpectationAndValue) {
    const std::string text_for_int = parse_error(R"({"model": {"layers": "six"}})");
    EXPECT_THAT(text_for_int, HasSubstr("'model.layers'"));
    EXPECT_THAT(text_for_int, HasSubstr("expects an integer"));
    EXPECT_THAT(text_for_int, HasSubstr("\"six\""));
    EXPECT_THAT(parse_error(R"({"model": {"layers": 1.5}})"), HasSubstr("expects an integer, got 1.5"));
    EXPECT_THAT(parse_error(R"({"model": {"layers": true}})"), HasSubstr("expects an integer, got true"));
    EXPECT_THAT(parse_error(R"({"model": {"layers": 3000000000}})"), HasSubstr("an integer between"));
    EXPECT_THAT(parse_error(R"({"train": {"seed": -1}})"),
                HasSubstr("'train.seed' expects a non-negative integer, got -1"));
    EXPECT_THAT(parse_error(R"({"train": {"lr": "fast"}})"), HasSubstr("'train.lr' expects a number"));
    EXPECT_THAT(parse_error(R"({"model": {"theory_mode": 1}})"), HasSubstr("expects true or false, got 1"));
    EXPECT_THAT(parse_error(R"({"data": {"text_path": 3}})"), HasSubstr("'data.text_path' expects a string"));
    EXPECT_THAT(parse_error(R"({"threads": [1]})"), HasSubstr("'threads' expects an integer, got [1]"));
    EXPECT_EQ(parse(R"({"train": {"seed": 18446744073709551615}})").train.seed, 18446744073709551615ULL);
}

TEST(ConfigParse, UnknownEnumValueListsAcceptedValues) {
    EXPECT_THAT(parse_error(R"({"model": {"norm_type": "groupnorm"}})"),
                HasSubstr("'model.norm_type' expects one of layernorm|rmsnorm|dyt|batchnorm|powernorm, got "
                          "\"groupnorm\""));
    EXPECT_THAT(parse_error(R"({"device": "gpu"})"), HasSubstr("one of auto|cpu|cuda"));
    EXPECT_THAT(parse_error(R"({"data": {"task": "add"}})"),
                HasSubstr("one of text|copy|reverse|sort|modadd"));
}

TEST(ConfigFile, ReadsAFileAndNamesAMissingOne) {
    const std::string path = ::testing::TempDir() + "normlab_test_config.json";
    {
        std::ofstream out(path);
        out << R"({"model": {"layers": 2}})";
    }
    EXPECT_EQ(config_from_file(path).model.layers, 2);
    {
        std::ofstream out(path);
        out << R"({"model": {"layers": "x"}})";
    }
    EXPECT_THAT(error_of([&] { config_from_file(path); }), HasSubstr(path));
    std::remove(path.c_str());
    const std::string missing = error_of([&] { config_from_file("/no/such/dir/cfg.json"); });
    EXPECT_THAT(missing, HasSubstr("cannot read config file '/no/such/dir/cfg.json'"));
    EXPECT_THAT(error_of([&] { config_from_file(::testing::TempDir()); }), HasSubstr("directory"));
}

TEST(ConfigFile, RequiresARegularFile) {
    // A device reads as an empty (or endless) stream; it must be refused by kind, not parsed.
    EXPECT_THAT(error_of([&] { config_from_file("/dev/null"); }),
                HasSubstr("cannot read config file '/dev/null': it is not a regular file"));
    EXPECT_THAT(error_of([&] { config_from_file(::testing::TempDir()); }),
                HasSubstr("it is a directory; give the path of a JSON file"));
}

TEST(ConfigWiring, DeepNormAndAdminOutsidePostLnGetANoteNotAnError) {
    Config config;
    config.model.residual = Residual::DeepNorm;
    config.model.norm_placement = NormPlacement::Post;
    EXPECT_EQ(wiring_note(config.model), "");
    config.model.norm_placement = NormPlacement::Pre;
    EXPECT_NO_THROW(validate(config)) << "the model supports every placement x residual deliberately";
    EXPECT_EQ(wiring_note(config.model),
              "model.residual=deepnorm with model.norm_placement=pre: DeepNorm is a Post-LN scheme "
              "(docs/science.md); here its shortcut scale is applied to the pre wiring as an experiment. Set "
              "model.norm_placement=post for the published scheme.");
    config.model.residual = Residual::Admin;
    config.model.norm_placement = NormPlacement::Peri;
    EXPECT_THAT(wiring_note(config.model), HasSubstr("Admin is a Post-LN scheme"));
    EXPECT_THAT(wiring_note(config.model), HasSubstr("model.norm_placement=post"));
    config.model.residual = Residual::ReZero;
    config.model.norm_placement = NormPlacement::None;
    EXPECT_EQ(wiring_note(config.model), "");
}

TEST(ConfigOverride, EachValueType) {
    Config c;
    apply_override(c, "model.layers=12");
    apply_override(c, "train.lr=1e-3");
    apply_override(c, "train.clip_grad_norm=2");
    apply_override(c, "model.theory_mode=true");
    apply_override(c, "model.norm_placement=post");
    apply_override(c, "model.norm_type=\"rmsnorm\"");
    apply_override(c, "train.seed=18446744073709551615");
    apply_override(c, "data.text_path=dir/a=b.txt");
    apply_override(c, "device=cuda");
    apply_override(c, " threads = 4");
    EXPECT_EQ(c.model.layers, 12);
    EXPECT_EQ(c.train.lr, 1e-3);
    EXPECT_EQ(c.train.clip_grad_norm, 2.0);
    EXPECT_TRUE(c.model.theory_mode);
    EXPECT_EQ(c.model.norm_placement, NormPlacement::Post);
    EXPECT_EQ(c.model.norm_type, NormType::RmsNorm);
    EXPECT_EQ(c.train.seed, 18446744073709551615ULL);
    EXPECT_EQ(c.data.text_path, "dir/a=b.txt");
    EXPECT_EQ(c.device, "cuda");
    EXPECT_EQ(c.threads, 4);
    apply_override(c, "data.text_path=123");
    EXPECT_EQ(c.data.text_path, "123");
    apply_override(c, "data.text_path=");
    EXPECT_EQ(c.data.text_path, "");
}

TEST(ConfigOverride, ErrorsUseTheSameMessages) {
    EXPECT_THAT(override_error("model.layers"), HasSubstr("key=value"));
    EXPECT_THAT(override_error("=12"), HasSubstr("key=value"));
    EXPECT_THAT(override_error(""), HasSubstr("key=value"));
    const std::string wrong = override_error("model.layers=abc");
    EXPECT_THAT(wrong, HasSubstr("--set 'model.layers=abc'"));
    EXPECT_THAT(wrong, HasSubstr("'model.layers' expects an integer, got \"abc\""));
    EXPECT_THAT(override_error("model.norm_placement=middle"), HasSubstr("one of post|pre|peri|none"));
    EXPECT_THAT(override_error("train.lr=nan"), HasSubstr("'train.lr' expects a number"));
    EXPECT_THAT(override_error("train.lr=1e999"), HasSubstr("'train.lr' expects a number"));
    EXPECT_THAT(override_error("train.seed=-3"), HasSubstr("non-negative integer"));
    EXPECT_THAT(override_error("model.d_modle=3"), HasSubstr("did you mean 'model.d_model'?"));
}

TEST(ConfigRoundTrip, EveryKeySurvivesJsonText) {
    const Config original = non_default_config();
    ASSERT_NO_THROW(validate(original));
    const nlohmann::json defaults = config_to_json(Config{});
    const nlohmann::json changed = config_to_json(original);
    for (const std::string& key : config_keys()) {
        const nlohmann::json::json_pointer pointer(
            "/" + key.substr(0, key.find('.')) +
            (key.find('.') == std::string::npos ? "" : "/" + key.substr(key.find('.') + 1)));
        ASSERT_TRUE(changed.contains(pointer)) << key;
        EXPECT_NE(changed.at(pointer), defaults.at(pointer)) << key << " is not exercised by the round trip";
    }
    EXPECT_EQ(changed["model"]["norm_type"], "dyt");
    const std::string text = config_to_json_text(original);
    EXPECT_THAT(text, HasSubstr("\n  \"data\": {\n    \""));
    expect_same(config_from_json_text(text, "round-trip"), original);
    expect_same(parse(config_to_json_text(Config{})), Config{});
}

TEST(ConfigValidate, SizesMustBePositiveAndBounded) {
    EXPECT_EQ(validate_error([](Config& c) { c.model.d_model = 0; }),
              "model.d_model must be an integer in [1, 65536], got 0");
    EXPECT_THAT(validate_error([](Config& c) { c.model.layers = -1; }),
                HasSubstr("model.layers must be an integer in [1, 10000], got -1"));
    EXPECT_THAT(validate_error([](Config& c) { c.model.heads = 0; }),
                HasSubstr("model.heads must be an integer in [1, 65536]"));
    EXPECT_THAT(validate_error([](Config& c) { c.model.d_ff = 0; }),
                HasSubstr("model.d_ff must be an integer in [1, 65536]"));
    EXPECT_THAT(validate_error([](Config& c) { c.model.seq_len = 0; }),
                HasSubstr("model.seq_len must be an integer in [1, 65536]"));
    EXPECT_THAT(validate_error([](Config& c) { c.train.batch_size = 0; }),
                HasSubstr("train.batch_size must be an integer in [1, 65536]"));
    EXPECT_THAT(validate_error([](Config& c) { c.model.d_model = 1 << 20; }),
                HasSubstr("model.d_model must be an integer in [1, 65536], got 1048576"));
    EXPECT_THAT(validate_error([](Config& c) { c.model.d_ff = 70000; }),
                HasSubstr("model.d_ff must be an integer in [1, 65536]"));
    EXPECT_THAT(validate_error([](Config& c) { c.model.layers = 10001; }),
                HasSubstr("model.layers must be an integer in [1, 10000], got 10001"));
    EXPECT_THAT(validate_error([](Config& c) { c.model.seq_len = 65537; }),
                HasSubstr("model.seq_len must be an integer in [1, 65536]"));
    EXPECT_THAT(validate_error([](Config& c) { c.train.batch_size = 65537; }),
                HasSubstr("train.batch_size must be an integer in [1, 65536]"));
}

TEST(ConfigValidate, HeadsMustDivideWidth) {
    const std::string message = validate_error([](Config& c) {
        c.model.d_model = 100;
        c.model.heads = 3;
    });
    EXPECT_THAT(message, HasSubstr("model.d_model (100) must be divisible by model.heads (3)"));
    EXPECT_THAT(message, HasSubstr("try d_model 99 or 102"));
    EXPECT_THAT(message, HasSubstr("or heads 2 or 4"));
    EXPECT_THAT(validate_error([](Config& c) {
                    c.model.d_model = 4;
                    c.model.heads = 8;
                }),
                HasSubstr("try d_model 8, or heads 4"));
}

TEST(ConfigValidate, RopeNeedsAnEvenHeadDimension) {
    const std::string message = validate_error([](Config& c) {
        c.model.d_model = 36;
        c.model.heads = 4;
        c.model.position = Position::Rope;
    });
    EXPECT_THAT(message, HasSubstr("model.position=rope"));
    EXPECT_THAT(message, HasSubstr("d_model / heads = 9 is odd"));
    EXPECT_THAT(validate_error([](Config& c) { c.model.rope_theta = 1.0; }),
                HasSubstr("model.rope_theta must be"));
    Config learned;
    learned.model.d_model = 36;
    learned.model.heads = 4;
    EXPECT_NO_THROW(validate(learned));
}

// The error names the key, the heads it must divide and every value that would do.
TEST(ConfigValidate, KvHeadsMustDivideHeads) {
    EXPECT_EQ(validate_error([](Config& c) { c.model.kv_heads = 3; }),
              "model.kv_heads (3) must divide model.heads (4); set model.kv_heads to one of 1, 2, 4 "
              "(1: multi-query), or 0 for as many as the heads");
    EXPECT_THAT(validate_error([](Config& c) { c.model.kv_heads = 8; }),
                HasSubstr("must divide model.heads"));
    EXPECT_THAT(validate_error([](Config& c) { c.model.kv_heads = -1; }),
                HasSubstr("model.kv_heads must be"));
    for (int kv_heads : {0, 1, 2, 4}) {
        Config config;
        config.model.kv_heads = kv_heads;
        EXPECT_NO_THROW(validate(config)) << kv_heads;
    }
}

TEST(ConfigValidate, TrainingNumbers) {
    EXPECT_EQ(validate_error([](Config& c) { c.train.lr = -0.1; }),
              "train.lr must be a finite number >= 0, got -0.1");
    EXPECT_THAT(validate_error([](Config& c) { c.train.lr = std::nan(""); }),
                HasSubstr("train.lr must be a finite number >= 0, got nan"));
    EXPECT_THAT(validate_error([](Config& c) { c.train.lr = std::numeric_limits<double>::infinity(); }),
                HasSubstr("train.lr must be a finite number"));
    EXPECT_THAT(validate_error([](Config& c) { c.train.warmup_steps = -1; }),
                HasSubstr("train.warmup_steps must be an integer >= 0, got -1"));
    EXPECT_THAT(validate_error([](Config& c) { c.train.steps = -5; }), HasSubstr("train.steps must be"));
    EXPECT_THAT(validate_error([](Config& c) { c.train.clip_grad_norm = -1; }),
                HasSubstr("train.clip_grad_norm must be a finite number >= 0"));
    EXPECT_THAT(validate_error([](Config& c) { c.train.beta1 = 1.0; }),
                HasSubstr("train.beta1 must be a finite number in [0, 1), got 1"));
    EXPECT_THAT(validate_error([](Config& c) { c.train.beta2 = -0.5; }), HasSubstr("train.beta2 must be"));
    EXPECT_THAT(validate_error([](Config& c) { c.train.eps = 0.0; }),
                HasSubstr("train.eps must be a finite number > 0"));
    EXPECT_THAT(validate_error([](Config& c) { c.train.weight_decay = -0.01; }),
                HasSubstr("train.weight_decay must be a finite number >= 0"));
    EXPECT_THAT(validate_error([](Config& c) { c.train.weight_decay_mode = WeightDecayMode::Independent; }),
                HasSubstr("set train.optimizer=adamw"));
    EXPECT_THAT(validate_error([](Config& c) { c.train.momentum = 1.0; }),
                HasSubstr("train.momentum must be a finite number in [0, 1)"));
    EXPECT_THAT(validate_error([](Config& c) { c.train.min_lr_ratio = 1.5; }),
                HasSubstr("train.min_lr_ratio must be a finite number in [0, 1]"));
    EXPECT_EQ(validate_error([](Config& c) {
                  c.train.min_lr_ratio = 1.0;
                  c.train.lr = 0.0;
                  c.train.steps = 0;
              }),
              "");
}

TEST(ConfigValidate, ModelNumbers) {
    EXPECT_THAT(validate_error([](Config& c) { c.model.norm_eps = 0.0; }),
                HasSubstr("model.norm_eps must be a finite number > 0"));
    EXPECT_THAT(validate_error([](Config& c) { c.model.deepnorm_alpha = -1.0; }),
                HasSubstr("model.deepnorm_alpha must be a finite number >= 0"));
    EXPECT_THAT(
        validate_error([](Config& c) { c.model.deepnorm_beta = std::numeric_limits<double>::infinity(); }),
        HasSubstr("model.deepnorm_beta must be a finite number >= 0, got inf"));
    EXPECT_EQ(validate_error([](Config& c) { c.model.theory_mode = true; }), "");
}

TEST(ConfigValidate, DataTelemetryAndThreads) {
    EXPECT_THAT(validate_error([](Config& c) { c.data.val_fraction = 0.0; }),
                HasSubstr("data.val_fraction must be a finite number in (0, 0.5], got 0"));
    EXPECT_THAT(validate_error([](Config& c) { c.data.val_fraction = 0.6; }), HasSubstr("data.val_fraction"));
    EXPECT_EQ(validate_error([](Config& c) { c.data.val_fraction = 0.5; }), "");
    EXPECT_THAT(validate_error([](Config& c) { c.data.symbols = 1; }),
                HasSubstr("data.symbols must be an integer in [2, 65536], got 1"));
    EXPECT_THAT(validate_error([](Config& c) { c.data.modulus = 1; }),
                HasSubstr("data.modulus must be an integer in [2, 4096], got 1"));
    EXPECT_THAT(validate_error([](Config& c) { c.data.modulus = 4097; }), HasSubstr("data.modulus"));
    EXPECT_THAT(validate_error([](Config& c) { c.telemetry.every = 0; }),
                HasSubstr("telemetry.every must be an integer >= 1, got 0"));
    EXPECT_THAT(validate_error([](Config& c) { c.telemetry.val_every = -1; }),
                HasSubstr("telemetry.val_every must be an integer >= 0"));
    EXPECT_THAT(validate_error([](Config& c) { c.telemetry.val_batches = 0; }),
                HasSubstr("telemetry.val_batches must be an integer >= 1"));
    EXPECT_THAT(validate_error([](Config& c) { c.telemetry.spike_window = 4; }),
                HasSubstr("telemetry.spike_window must be an integer >= 5, got 4"));
    EXPECT_THAT(validate_error([](Config& c) { c.telemetry.spike_z = 0.0; }),
                HasSubstr("telemetry.spike_z must be a finite number > 0"));
    EXPECT_THAT(validate_error([](Config& c) { c.threads = -1; }),
                HasSubstr("threads must be an integer in [0, 1024], got -1: set it to 0 for every core"));
    EXPECT_THAT(validate_error([](Config& c) { c.threads = 1000000; }),
                HasSubstr("threads must be an integer in [0, 1024], got 1000000"));
    EXPECT_EQ(validate_error([](Config& c) { c.threads = kMaxThreads; }), "");
}

TEST(ConfigValidate, StringsBuiltInCodeAreChecked) {
    EXPECT_THAT(validate_error([](Config& c) { c.device = "gpu"; }),
                HasSubstr("device must be one of auto|cpu|cuda, got \"gpu\""));
}

}  // namespace
TEST(ConfigDiff, NamesTheKeysWhoseValuesDifferAmongTheConfigsThatHaveThem) {
    Config post;
    post.model.norm_placement = NormPlacement::Post;
    Config pre = post;
    pre.model.norm_placement = NormPlacement::Pre;
    pre.train.lr = 0.01;
    EXPECT_EQ(differing_keys({flatten_config(post), flatten_config(pre)}),
              (std::vector<std::string>{"model.norm_placement", "train.lr"}));
    EXPECT_TRUE(differing_keys({flatten_config(post)}).empty());
    EXPECT_TRUE(differing_keys({flatten_config(post), flatten_config(post)}).empty());

    // Another writer's run knows only its shape: its missing keys are unknown, not different.
    Config other;
    other.model.layers = 24;
    const FlatConfig shape = flatten_config(other, {"model.layers", "model.d_model"});
    EXPECT_EQ(shape.size(), 2u);
    EXPECT_EQ(shape.at("model.layers"), "24");
    EXPECT_EQ(differing_keys({flatten_config(post), shape}), (std::vector<std::string>{"model.layers"}));
    EXPECT_EQ(differing_keys({shape, flatten_config(post), flatten_config(pre)}),
              (std::vector<std::string>{"model.layers", "model.norm_placement", "train.lr"}));
}

}  // namespace normlab
