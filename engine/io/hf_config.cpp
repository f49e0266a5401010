// Reads and writes Hugging Face config.json for the Llama and GPT-2 families: a reader that marks each
// key it uses, refuses what NormLab cannot build (collecting every problem before it throws) and leaves
// only bookkeeping keys unread; the writer maps a NormLab model config back to transformers' keys.
#include "engine/io/hf_config.h"

#include <cmath>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/config/config_keys.h"
#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/number_format.h"

namespace normlab {

namespace {
using json = nlohmann::json;

// Keys of transformers' configs that change nothing NormLab computes: token ids, caching, dtypes of
// storage, versions, labels of task heads, generation settings of older files.
const std::set<std::string> kBookkeeping = {"architectures",
                                            "bos_token_id",
                                            "eos_token_id",
                                            "pad_token_id",
                                            "sep_token_id",
                                            "decoder_start_token_id",
                                            "torch_dtype",
                                            "dtype",
                                            "transformers_version",
                                            "use_cache",
                                            "_name_or_path",
                                            "return_dict",
                                            "output_hidden_states",
                                            "output_attentions",
                                            "id2label",
                                            "label2id",
                                            "num_labels",
                                            "problem_type",
                                            "tokenizer_class",
                                            "prefix",
                                            "task_specific_params",
                                            "finetuning_task",
                                            "chunk_size_feed_forward",
                                            "torchscript",
                                            "use_return_dict",
                                            "max_length",
                                            "min_length",
                                            "do_sample",
                                            "num_beams",
                                            "temperature",
                                            "top_k",
                                            "top_p",
                                            "repetition_penalty",
                                            "length_penalty",
                                            "no_repeat_ngram_size",
                                            "early_stopping",
                                            "num_return_sequences",
                                            "bad_words_ids",
                                            "forced_bos_token_id",
                                            "forced_eos_token_id",
                                            "initializer_range",
                                            "model_type"};

std::string value_text(const json& value) {
    return value.is_string() ? value.get<std::string>() : value.dump();
}

// One config.json being read: each key NormLab reads is taken (marked), every problem is kept, and
// finish() refuses the keys nobody took that are not bookkeeping.
class ConfigReader {
  public:
    ConfigReader(const json& config, std::string source, HfUse use)
        : m_config(config), m_source(std::move(source)), m_use(use) {}

    HfUse use() const { return m_use; }

    // The key's value, or nullptr when it is absent or null; marks it as read either way.
    const json* take(const std::string& key) {
        m_taken.insert(key);
        const auto found = m_config.find(key);
        return found == m_config.end() || found->is_null() ? nullptr : &*found;
    }
    int integer(const std::string& key, int fallback) {
        const json* value = take(key);
        if (!value) return fallback;
        if (value->is_number_integer() ||
            (value->is_number_float() && std::floor(value->get<double>()) == value->get<double>()))
            return value->get<int>();
        refuse(key, value_text(*value), "expected an integer");
        return fallback;
    }
    double number(const std::string& key, double fallback) {
        const json* value = take(key);
        if (!value) return fallback;
        if (value->is_number()) return value->get<double>();
        refuse(key, value_text(*value), "expected a number");
        return fallback;
    }
    bool flag(const std::string& key, bool fallback) {
        const json* value = take(key);
        if (!value) return fallback;
        if (value->is_boolean()) return value->get<bool>();
        refuse(key, value_text(*value), "expected true or false");
        return fallback;
    }
    std::string text(const std::string& key, const std::string& fallback) {
        const json* value = take(key);
        if (!value) return fallback;
        if (value->is_string()) return value->get<std::string>();
        refuse(key, value_text(*value), "expected a string");
        return fallback;
    }
    // A key whose only value NormLab builds is `expected`.
    void require_flag(const std::string& key, bool fallback, bool expected, const std::string& why) {
        if (flag(key, fallback) != expected) refuse(key, expected ? "false" : "true", why);
    }
    // Dropout: refused when training (NormLab trains without), read and ignored when evaluating.
    void dropout(const std::string& key) {
        const double rate = number(key, 0.0);
        if (m_use == HfUse::Train && rate != 0.0)
            refuse(key, format_number(rate),
                   "NormLab trains without dropout; set it to 0.0 in a copy of the file");
    }
    void refuse(const std::string& key, const std::string& value, const std::string& why) {
        m_problems.push_back(key + " = " + value + ": " + why);
    }
    void set(const std::string& key, const std::string& value) {
        m_model.overrides.push_back(key + "=" + value);
    }
    void set(const std::string& key, int value) { set(key, std::to_string(value)); }
    void assign(const std::string& assignment) { m_model.overrides.push_back(assignment); }
    void note(const std::string& text) { m_model.notes.push_back(text); }

    HfModel finish(HfFamily family) {
        for (const auto& [key, value] : m_config.items()) {
            if (m_taken.count(key) || kBookkeeping.count(key)) continue;
            refuse(key, value_text(value),
                   "not a key NormLab's import knows (it may change the computation)");
        }
        if (!m_problems.empty()) {
            std::string text = m_source + ": NormLab cannot build this " + to_string(family) + " model:";
            for (const std::string& problem : m_problems) text += "\n  " + problem;
            throw InputError(text + "\n(docs/huggingface.md lists the keys NormLab reads and ignores)");
        }
        m_model.family = family;
        return m_model;
    }

  private:
    const json& m_config;
    std::string m_source;
    HfUse m_use;
    std::set<std::string> m_taken;
    std::vector<std::string> m_problems;
    HfModel m_model;
};

// RoPE's base from rope_parameters (transformers 5) or rope_theta (older files); any frequency scaling
// (rope_scaling, a rope_type other than default, a partial rotation) is refused.
double read_rope_theta(ConfigReader& reader) {
    double theta = reader.number("rope_theta", 10000.0);
    for (const std::string& key : {std::string("rope_parameters"), std::string("rope_scaling")}) {
        const json* parameters = reader.take(key);
        if (!parameters) continue;
        if (!parameters->is_object()) {
            reader.refuse(key, value_text(*parameters), "expected an object");
            continue;
        }
        for (const auto& [name, value] : parameters->items()) {
            const bool default_type = (name == "rope_type" || name == "type") && value == "default";
            if (name == "rope_theta" && value.is_number()) {
                theta = value.get<double>();
            } else if (!default_type && !(name == "partial_rotary_factor" && value == 1)) {
                reader.refuse(key + "." + name, value_text(value),
                              "NormLab's RoPE turns every dimension pair at theta^(-2i/d_head), unscaled");
            }
        }
    }
    return theta;
}

HfModel read_llama(ConfigReader& reader) {
    const int d = reader.integer("hidden_size", 4096);  // LlamaConfig's defaults where a key is absent
    const int heads = reader.integer("num_attention_heads", 32);
    reader.set("model.d_model", d);
    reader.set("model.heads", heads);
    reader.set("model.layers", reader.integer("num_hidden_layers", 32));
    reader.set("model.d_ff", reader.integer("intermediate_size", 11008));
    reader.set("model.kv_heads", reader.integer("num_key_value_heads", heads));
    reader.set("model.vocab_size", reader.integer("vocab_size", 32000));
    reader.set("model.seq_len", reader.integer("max_position_embeddings", 2048));
    const int head_dim = reader.integer("head_dim", heads > 0 ? d / heads : 0);
    if (heads > 0 && head_dim * heads != d)
        reader.refuse("head_dim", std::to_string(head_dim),
                      "NormLab's heads are hidden_size / num_attention_heads = " +
                          format_number(double(d) / heads) + " wide");
    const std::string act = reader.text("hidden_act", "silu");
    if (act == "silu" || act == "gelu") {
        reader.set("model.ffn", act == "silu" ? "swiglu" : "geglu");
    } else {
        reader.refuse("hidden_act", act, "NormLab's gated FFN takes silu (SwiGLU) or gelu (GeGLU)");
    }
    reader.set("model.norm_eps", format_number(reader.number("rms_norm_eps", 1e-6)));
    reader.set("model.rope_theta", format_number(read_rope_theta(reader)));
    const bool attention_bias = reader.flag("attention_bias", false);
    if (reader.flag("mlp_bias", false) != attention_bias)
        reader.refuse(
            "mlp_bias", attention_bias ? "false" : "true",
            "NormLab's model.bias gives every linear layer a bias or none; set it equal to attention_bias");
    reader.set("model.bias", attention_bias ? "true" : "false");
    reader.set("model.tie_embeddings", reader.flag("tie_word_embeddings", false) ? "true" : "false");
    reader.dropout("attention_dropout");
    if (const int tp = reader.integer("pretraining_tp", 1); tp != 1)
        reader.refuse("pretraining_tp", std::to_string(tp), "NormLab computes each projection as one matrix");
    for (const char* fixed : {"model.norm_placement=pre", "model.norm_type=rmsnorm", "model.position=rope"})
        reader.assign(fixed);
    return reader.finish(HfFamily::Llama);
}

HfModel read_gpt2(ConfigReader& reader) {
    const int d = reader.integer("n_embd", 768);  // GPT2Config's defaults where a key is absent
    reader.set("model.d_model", d);
    reader.set("model.heads", reader.integer("n_head", 12));
    reader.set("model.layers", reader.integer("n_layer", 12));
    reader.set("model.d_ff", reader.integer("n_inner", 4 * d));
    reader.set("model.vocab_size", reader.integer("vocab_size", 50257));
    const int positions = reader.integer("n_positions", 1024);
    reader.set("model.seq_len", positions);
    if (const int context = reader.integer("n_ctx", positions); context != positions)
        reader.refuse("n_ctx", std::to_string(context),
                      "expected n_positions (" + std::to_string(positions) + ")");
    const std::string act = reader.text("activation_function", "gelu_new");
    if (act == "gelu_new" || act == "gelu_pytorch_tanh") {
        reader.set("model.activation", "gelu_tanh");
    } else if (act == "gelu" || act == "relu") {
        reader.set("model.activation", act);
    } else {
        reader.refuse("activation_function", act,
                      "NormLab's MLP takes gelu_new, gelu_pytorch_tanh, gelu or relu");
    }
    reader.set("model.norm_eps", format_number(reader.number("layer_norm_epsilon", 1e-5)));
    reader.set("model.tie_embeddings", reader.flag("tie_word_embeddings", true) ? "true" : "false");
    for (const char* key : {"attn_pdrop", "embd_pdrop", "resid_pdrop"}) reader.dropout(key);
    reader.require_flag("scale_attn_weights", true, true,
                        "NormLab scales attention logits by 1/sqrt(d_head)");
    reader.require_flag("scale_attn_by_inverse_layer_idx", false, false,
                        "NormLab scales every block's attention logits alike");
    reader.require_flag("add_cross_attention", false, false, "an imported GPT-2 is decoder-only");
    reader.flag("reorder_and_upcast_attn", false);  // the same maths in float32, NormLab's precision
    for (const char* key : {"summary_type", "summary_use_proj", "summary_activation",
                            "summary_proj_to_labels", "summary_first_dropout"})
        reader.take(key);  // the sequence-summary head of GPT2DoubleHeadsModel: no part of the LM
    for (const char* fixed :
         {"model.norm_placement=pre", "model.norm_type=layernorm", "model.position=learned", "model.ffn=mlp",
          "model.bias=true", "model.kv_heads=0"})
        reader.assign(fixed);
    return reader.finish(HfFamily::Gpt2);
}
}  // namespace

std::string to_string(HfFamily family) {
    return family == HfFamily::Llama ? "Llama" : "GPT-2";
}

HfModel hf_model_from_json(const json& config, const std::string& source, HfUse use) {
    if (!config.is_object()) throw InputError(source + ": a config.json holds a JSON object");
    const auto type = config.find("model_type");
    const std::string model_type = type != config.end() && type->is_string() ? type->get<std::string>() : "";
    ConfigReader reader(config, source, use);
    for (const char* fixed : {"model.encoder_layers=0", "model.theory_mode=false", "model.residual=plain",
                              "model.qk_norm=none", "model.init=gpt2"})
        reader.assign(fixed);
    reader.note(
        "initializer_range: NormLab draws a new model's weights with its gpt2 scheme (N(0, 0.02), "
        "residual outputs 0.02/sqrt(2L)); a checkpoint's weights replace them");
    if (model_type == "llama") return read_llama(reader);
    if (model_type == "gpt2") return read_gpt2(reader);
    throw InputError(source + ": model_type " + (model_type.empty() ? "missing" : "'" + model_type + "'") +
                     "; NormLab builds Hugging Face's \"llama\" and \"gpt2\" models");
}

HfModel read_hf_config(const std::string& path, HfUse use) {
    std::filesystem::path file(path);
    if (std::filesystem::is_directory(file)) file /= "config.json";
    return hf_model_from_json(read_json_file(file.string(), "Hugging Face config"), file.string(), use);
}

}  // namespace normlab
