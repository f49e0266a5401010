// The name table between NormLab's and Hugging Face's Llama and GPT-2 tensors, and the two walks over
// it: a Hugging Face checkpoint (one file, or shards behind an index) into NormLab tensors, checked
// for missing, misshapen and left-over tensors; and a NormLab model's tensors out under Hugging Face names.
#include "engine/io/hf_weights.h"

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/io/checkpoint.h"
#include "engine/model/layout.h"
#include "engine/model/model.h"

namespace normlab {

namespace {
namespace fs = std::filesystem;

// GPT-2 checkpoints written by save_pretrained name tensors "transformer.h.0...."; the original hub files
// leave the prefix out.
constexpr const char* kGpt2Prefix = "transformer.";

// A NormLab block tensor's name split as "blocks.{index}.{module}.{weight|bias}".
struct BlockTensor {
    int index = -1;
    std::string module, kind;
};

BlockTensor split_block_name(const std::string& name) {
    BlockTensor out;
    if (name.rfind("blocks.", 0) != 0) return out;
    const size_t dot = name.find('.', 7);
    const size_t last = name.rfind('.');
    if (dot == std::string::npos || last <= dot) return out;
    out.index = std::stoi(name.substr(7, dot - 7));
    out.module = name.substr(dot + 1, last - dot - 1);
    out.kind = name.substr(last + 1);
    return out;
}

std::vector<HfPart> llama_parts(const ModelConfig& model, const std::string& name, int64_t rows) {
    auto one = [rows](const std::string& hf) { return std::vector<HfPart>{{hf, rows, false}}; };
    if (name == "wte.weight") return one("model.embed_tokens.weight");
    if (name == "head.weight") return one("lm_head.weight");
    if (name == "final_norm.weight") return one("model.norm.weight");
    const BlockTensor block = split_block_name(name);
    if (block.index < 0) return {};
    const std::string p = "model.layers." + std::to_string(block.index) + ".";
    const std::string kind = "." + block.kind;
    if (block.module == "norm1" && block.kind == "weight") return one(p + "input_layernorm.weight");
    if (block.module == "norm2" && block.kind == "weight") return one(p + "post_attention_layernorm.weight");
    if (block.module == "attn.qkv") {
        const int64_t kv = key_value_width(model);
        return {{p + "self_attn.q_proj" + kind, model.d_model, false},
                {p + "self_attn.k_proj" + kind, kv, false},
                {p + "self_attn.v_proj" + kind, kv, false}};
    }
    if (block.module == "attn.out") return one(p + "self_attn.o_proj" + kind);
    if (block.module == "ffn.gate") return one(p + "mlp.gate_proj" + kind);
    if (block.module == "ffn.fc1") return one(p + "mlp.up_proj" + kind);
    if (block.module == "ffn.fc2") return one(p + "mlp.down_proj" + kind);
    return {};
}

std::vector<HfPart> gpt2_parts(const std::string& name, int64_t rows, bool matrix) {
    const std::string t = kGpt2Prefix;
    auto one = [rows](const std::string& hf, bool transposed = false) {
        return std::vector<HfPart>{{hf, rows, transposed}};
    };
    if (name == "wte.weight" || name == "wpe.weight") return one(t + name);
    if (name == "head.weight") return one("lm_head.weight");
    if (name == "final_norm.weight" || name == "final_norm.bias") return one(t + "ln_f." + name.substr(11));
    const BlockTensor block = split_block_name(name);
    if (block.index < 0) return {};
    const std::string p = t + "h." + std::to_string(block.index) + ".";
    const std::string kind = "." + block.kind;
    if (block.module == "norm1") return one(p + "ln_1" + kind);
    if (block.module == "norm2") return one(p + "ln_2" + kind);
    if (block.module == "attn.qkv") return one(p + "attn.c_attn" + kind, matrix);
    if (block.module == "attn.out") return one(p + "attn.c_proj" + kind, matrix);
    if (block.module == "ffn.fc1") return one(p + "mlp.c_fc" + kind, matrix);
    if (block.module == "ffn.fc2") return one(p + "mlp.c_proj" + kind, matrix);
    return {};
}

// Tensors a Hugging Face checkpoint may hold that are no parameters: GPT-2's causal-mask buffers and
// older Llamas' RoPE frequencies.
bool is_buffer(const std::string& name) {
    for (const char* suffix : {".attn.bias", ".attn.masked_bias", ".rotary_emb.inv_freq"}) {
        const std::string tail(suffix);
        if (name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0)
            return true;
    }
    return false;
}

std::vector<float> transposed(const std::vector<float>& values, int64_t rows, int64_t columns) {
    std::vector<float> out(values.size());
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < columns; ++c) out[c * rows + r] = values[r * columns + c];
    return out;
}

// Appends a part's rows to a NormLab tensor's (the first part.rows of a longer table; a transposed
// part is stored [columns, part.rows]).
void append_rows(std::vector<float>& out, const float* stored, const HfPart& part, int64_t columns) {
    if (!part.transposed) {
        out.insert(out.end(), stored, stored + part.rows * columns);
        return;
    }
    for (int64_t r = 0; r < part.rows; ++r)
        for (int64_t c = 0; c < columns; ++c) out.push_back(stored[c * part.rows + r]);
}

// The shape a part has in the Hugging Face file.
std::vector<int64_t> hf_shape(const HfPart& part, const std::vector<int64_t>& normlab_shape) {
    if (normlab_shape.size() == 1) return {part.rows};
    return part.transposed ? std::vector<int64_t>{normlab_shape[1], part.rows}
                           : std::vector<int64_t>{part.rows, normlab_shape[1]};
}

// Collects every problem of one import before throwing, so a user fixes them all in one go.
class Import {
  public:
    Import(const SafetensorsFile& hf, HfFamily family, std::string source)
        : m_hf(hf), m_source(std::move(source)) {
        // A GPT-2 file without the "transformer." prefix is read as if it had it.
        m_strip_prefix = family == HfFamily::Gpt2 && !hf.tensors.count("transformer.wte.weight") &&
                         hf.tensors.count("wte.weight");
    }

    // The rows of one NormLab tensor from its parts; empty after a problem.
    std::vector<float> tensor(const std::string& name, const std::vector<HfPart>& parts,
                              const std::vector<int64_t>& shape) {
        std::vector<float> out;
        const int64_t columns = shape.size() == 2 ? shape[1] : 1;
        for (const HfPart& part : parts) {
            const std::string stored = m_strip_prefix && part.name.rfind(kGpt2Prefix, 0) == 0
                                           ? part.name.substr(std::string(kGpt2Prefix).size())
                                           : part.name;
            const auto found = m_hf.tensors.find(stored);
            if (found == m_hf.tensors.end()) {
                m_problems.push_back("missing " + stored + " (NormLab's " + name + ")");
                continue;
            }
            m_used.insert(stored);
            std::vector<int64_t> expected = hf_shape(part, shape);
            const LoadedTensor& tensor = found->second;
            // Learned positions: the first seq_len rows of a longer table.
            const bool longer_table = name == "wpe.weight" && tensor.shape.size() == 2 &&
                                      tensor.shape[0] > expected[0] && tensor.shape[1] == expected[1];
            if (tensor.shape != expected && !longer_table) {
                m_problems.push_back(stored + " is " + shape_to_string(tensor.shape) + ", NormLab's " + name +
                                     " needs " + shape_to_string(expected));
                continue;
            }
            append_rows(out, tensor.data.data(), part, columns);
        }
        return out;
    }

    void finish(bool tied_head) {
        size_t left_over = 0;
        std::string names;
        for (const auto& [name, tensor] : m_hf.tensors) {
            if (m_used.count(name) || is_buffer(name) || (tied_head && name == "lm_head.weight")) continue;
            if (left_over++ < 5) names += (names.empty() ? "" : ", ") + name;
        }
        if (left_over > 0)
            m_problems.push_back(std::to_string(left_over) +
                                 " tensor(s) this config's model does not have: " + names +
                                 (left_over > 5 ? ", ..." : ""));
        if (m_problems.empty()) return;
        std::string text = m_source + " does not hold the model config.json describes:";
        for (size_t i = 0; i < m_problems.size() && i < 12; ++i) text += "\n  " + m_problems[i];
        if (m_problems.size() > 12) text += "\n  (and " + std::to_string(m_problems.size() - 12) + " more)";
        throw InputError(text);
    }

  private:
    const SafetensorsFile& m_hf;
    std::string m_source;
    bool m_strip_prefix = false;
    std::set<std::string> m_used;
    std::vector<std::string> m_problems;
};

// The shards a model.safetensors.index.json names, read into one file's tensors.
SafetensorsFile read_sharded(const fs::path& index) {
    const nlohmann::json json = read_json_file(index.string(), "Hugging Face checkpoint index");
    const auto map = json.find("weight_map");
    if (map == json.end() || !map->is_object())
        throw InputError(index.string() + " has no weight_map object naming each tensor's shard");
    std::set<std::string> shards;
    for (const auto& [tensor, shard] : map->items()) {
        if (!shard.is_string())
            throw InputError(index.string() + ": weight_map." + tensor + " is not a file name");
        shards.insert(shard.get<std::string>());
    }
    SafetensorsFile out;
    for (const std::string& shard : shards) {
        SafetensorsFile part = read_safetensors((index.parent_path() / shard).string());
        for (auto& [name, tensor] : part.tensors) out.tensors[name] = std::move(tensor);
    }
    return out;
}
}  // namespace

std::vector<HfPart> hf_parts(HfFamily family, const ModelConfig& model, const std::string& name,
                             const std::vector<int64_t>& shape) {
    const int64_t rows = shape.empty() ? 0 : shape[0];
    if (family == HfFamily::Llama) return llama_parts(model, name, rows);
    return gpt2_parts(name, rows, shape.size() == 2);
}

SafetensorsFile read_hf_checkpoint(const std::string& path) {
    fs::path file(path);
    if (fs::is_directory(file)) {
        if (fs::exists(file / "model.safetensors"))
            return read_safetensors((file / "model.safetensors").string());
        if (fs::exists(file / "model.safetensors.index.json"))
            return read_sharded(file / "model.safetensors.index.json");
        throw InputError(path +
                         " holds neither model.safetensors nor model.safetensors.index.json; "
                         "save the model with save_pretrained (safetensors, the default)");
    }
    if (file.extension() == ".json") return read_sharded(file);
    return read_safetensors(path);
}

SafetensorsFile normlab_tensors_from_hf(const SafetensorsFile& hf, HfFamily family, Model& model,
                                        const std::string& source) {
    Import import(hf, family, source);
    SafetensorsFile out;
    const auto& entries = model.layout().entries;
    for (size_t i = 0; i < entries.size(); ++i) {
        if (!model.active(static_cast<int>(i))) continue;
        const ParamEntry& entry = entries[i];
        const std::vector<HfPart> parts = hf_parts(family, model.config(), entry.name, entry.shape);
        if (parts.empty())
            throw InputError("NormLab's " + entry.name + " has no counterpart in Hugging Face's " +
                             to_string(family) + " (the config maps to a model that family lacks)");
        out.tensors[entry.name] = {entry.shape, import.tensor(entry.name, parts, entry.shape)};
    }
    import.finish(model.config().tie_embeddings);
    return out;
}

std::map<std::string, LoadedTensor> hf_tensors_of(Model& model, HfFamily family, bool gradient) {
    std::map<std::string, LoadedTensor> out;
    const auto& entries = model.layout().entries;
    for (size_t i = 0; i < entries.size(); ++i) {
        if (!model.active(static_cast<int>(i))) continue;
        const ParamEntry& entry = entries[i];
        const std::vector<float> values = model.read_entry(static_cast<int>(i), gradient);
        const int64_t columns = entry.shape.size() == 2 ? entry.shape[1] : 1;
        int64_t row = 0;
        for (const HfPart& part : hf_parts(family, model.config(), entry.name, entry.shape)) {
            const auto begin = values.begin() + static_cast<long>(row * columns);
            std::vector<float> rows(begin, begin + static_cast<long>(part.rows * columns));
            if (part.transposed) rows = transposed(rows, part.rows, columns);
            out[part.name] = {hf_shape(part, entry.shape), std::move(rows)};
            row += part.rows;
        }
    }
    return out;
}

void load_hf_weights(const std::string& checkpoint, HfFamily family, Model& model) {
    const SafetensorsFile hf = read_hf_checkpoint(checkpoint);
    load_parameters(normlab_tensors_from_hf(hf, family, model, checkpoint), model, checkpoint);
}

}  // namespace normlab
