// `normlab-cli eval`: mean next-token cross-entropy of a checkpoint over a file of token sequences
// (one sequence of integer ids per line) or a text (app/cli/eval_text.h). Needs only the checkpoint,
// not the training data: NormLab's own, or a Hugging Face Llama / GPT-2 (config.json and weights).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "app/cli/cli_options.h"
#include "app/cli/eval_text.h"
#include "app/cli/subcommands.h"
#include "engine/core/errors.h"
#include "engine/data/token_file.h"
#include "engine/io/checkpoint.h"
#include "engine/io/hf_weights.h"
#include "engine/io/safetensors.h"
#include "engine/model/model.h"

namespace normlab::cli {

namespace {
const char* kEvalHelp =
    "usage: normlab-cli eval --checkpoint FILE (--tokens FILE | --text FILE [--tokenizer T]) [--set ...] "
    "[--json]\n"
    "       normlab-cli eval --hf-checkpoint PATH [--hf-config FILE] (--tokens FILE | --text FILE "
    "[--tokenizer T])\n"
    "\n"
    "Prints {\"loss\": mean next-token cross-entropy over all predicted positions, \"tokens\": N} (always\n"
    "JSON; --json is accepted for scripts that say so). --hf-checkpoint evaluates a Hugging Face Llama or\n"
    "GPT-2: model.safetensors, a sharded index or their folder, with the config.json beside it or named\n"
    "by --hf-config (docs/huggingface.md).\n"
    "The tokens file holds one sequence of integer ids per line (spaces or commas between ids); a line of\n"
    "L ids predicts L-1 positions and may hold at most model.seq_len + 1 ids. Blank lines are skipped.\n"
    "--text scores a UTF-8 text instead, tokenized as the model was trained: with the tokenizer.model\n"
    "beside the checkpoint (its run folder, a Hugging Face model's folder), bytes for a byte-level run, or\n"
    "--tokenizer (bytes or a .model file); it adds \"bytes\" and \"bits_per_byte\", which compare models\n"
    "of different tokenizers. The text is cut into windows of model.seq_len + 1 tokens, each starting at\n"
    "the last token of the one before, so every token after the first is predicted once.\n"
    "\n"
    "  --set KEY=VALUE  only the keys that change how the checkpoint is evaluated, not what it is:\n"
    "                   device (auto|cpu|cuda) and threads (0: every core). The model and training keys\n"
    "                   come from the checkpoint.\n";

// The config keys that change how a checkpoint is evaluated without changing the model it holds.
const std::vector<std::string> kEvalKeys = {"device", "threads"};

void check_eval_assignment(const std::string& assignment) {
    const size_t equals = assignment.find('=');
    std::string key = assignment.substr(0, equals);
    key.erase(0, key.find_first_not_of(" \t"));
    key.erase(key.find_last_not_of(" \t") + 1);
    if (std::find(kEvalKeys.begin(), kEvalKeys.end(), key) != kEvalKeys.end()) return;
    std::string accepted;
    for (const std::string& name : kEvalKeys) accepted += (accepted.empty() ? "" : ", ") + name;
    throw InputError("eval --set '" + assignment + "': eval --set accepts only " + accepted +
                     "; the model and training keys come from the checkpoint (train --resume with --set to "
                     "change them)");
}
}  // namespace

namespace {
// The model to evaluate and the config it was built from.
struct LoadedModel {
    Config config;
    int vocab = 0;
    std::unique_ptr<Backend> backend;
    std::unique_ptr<Model> model;
};

void build_model(LoadedModel& loaded) {
    validate(loaded.config);
    std::string reason;
    loaded.backend = make_backend(loaded.config.device, loaded.config.threads, &reason);
    loaded.model = std::make_unique<Model>(loaded.config.model, loaded.vocab, *loaded.backend);
}

LoadedModel load_normlab_checkpoint(const std::string& checkpoint, const std::vector<std::string>& sets) {
    const SafetensorsFile file = read_safetensors(checkpoint);
    LoadedModel loaded;
    loaded.config = checkpoint_config(checkpoint);
    for (const std::string& assignment : sets) apply_override(loaded.config, assignment);
    loaded.vocab = checkpoint_vocab(file, checkpoint);
    build_model(loaded);
    load_parameters(file, *loaded.model, checkpoint);
    return loaded;
}

LoadedModel load_hugging_face(const ConfigSources& sources, const std::vector<std::string>& sets) {
    const std::string config_path = *sources.hf_config_path();
    const HfModel hf = read_hf_config(config_path, HfUse::Evaluate);
    LoadedModel loaded;
    for (const std::string& assignment : hf.overrides) apply_override(loaded.config, assignment);
    for (const std::string& assignment : sets) apply_override(loaded.config, assignment);
    loaded.vocab = loaded.config.model.vocab_size;
    build_model(loaded);
    load_hf_weights(*sources.hf_checkpoint, hf.family, *loaded.model);
    return loaded;
}

// The mean next-token loss over every predicted position of the sequences, and their count.
std::pair<double, int64_t> mean_loss(Model& model, const std::vector<std::vector<int32_t>>& sequences) {
    double loss_sum = 0.0;
    int64_t predicted = 0;
    Batch batch;
    model.set_feature_statistics(FeatureStatistics::Running);  // BatchNorm as at inference: one sequence
    for (const auto& ids : sequences) {
        if (ids.size() < 2) continue;
        batch.batch = 1;
        batch.seq = static_cast<int>(ids.size()) - 1;
        batch.inputs.assign(ids.begin(), ids.end() - 1);
        batch.targets.assign(ids.begin() + 1, ids.end());
        const ForwardStats stats = model.forward_backward(batch, {.backward = false});
        loss_sum += stats.loss * static_cast<double>(stats.scored);
        predicted += stats.scored;
    }
    return {predicted > 0 ? loss_sum / static_cast<double>(predicted) : 0.0, predicted};
}
}  // namespace

int run_eval(int argc, char** argv) {
    ArgReader reader(argc, argv, 2);
    std::string checkpoint;
    std::string tokens;
    std::string text;
    std::optional<std::string> tokenizer;
    std::vector<std::string> sets;
    ConfigSources hf;
    hf.takes_hf_checkpoint = true;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--help" || flag == "-h") {
            std::cout << kEvalHelp;
            return 0;
        } else if (flag == "--checkpoint") {
            checkpoint = reader.value_of(flag);
        } else if (flag == "--hf-config" || flag == "--hf-checkpoint") {
            hf.consume(flag, reader);
        } else if (flag == "--tokens") {
            tokens = reader.value_of(flag);
        } else if (flag == "--text") {
            text = reader.value_of(flag);
        } else if (flag == "--tokenizer") {
            tokenizer = reader.value_of(flag);
        } else if (flag == "--json") {
        } else if (flag == "--set") {
            sets.push_back(reader.value_of(flag));
            check_eval_assignment(sets.back());
        } else {
            throw InputError("unknown option '" + flag + "'; see normlab-cli eval --help");
        }
    }
    if (!checkpoint.empty() && (hf.hf_checkpoint || hf.hf_config))
        throw InputError(
            "eval takes --checkpoint FILE (NormLab's) or --hf-checkpoint PATH (Hugging Face's), not both");
    if (hf.hf_config && !hf.hf_checkpoint)
        throw InputError("--hf-config needs --hf-checkpoint PATH: the weights to evaluate");
    if ((checkpoint.empty() && !hf.hf_checkpoint) || tokens.empty() == text.empty())
        throw InputError(
            "eval needs --checkpoint FILE (or --hf-checkpoint PATH) and one of --tokens FILE and "
            "--text FILE");
    if (tokenizer && text.empty())
        throw InputError("--tokenizer tokenizes --text FILE; --tokens are ids already");

    LoadedModel loaded =
        checkpoint.empty() ? load_hugging_face(hf, sets) : load_normlab_checkpoint(checkpoint, sets);
    if (!text.empty()) {
        const std::string model_path = checkpoint.empty() ? *hf.hf_checkpoint : checkpoint;
        const auto chosen =
            eval_tokenizer(tokenizer, model_path, checkpoint.empty() ? nullptr : &loaded.config);
        const TextWindows windows =
            read_text_windows(text, *chosen, loaded.vocab, loaded.config.model.seq_len);
        const auto [loss, predicted] = mean_loss(*loaded.model, windows.sequences);
        const double bits = loss * static_cast<double>(predicted) / std::log(2.0);
        std::cout << nlohmann::json({{"loss", loss},
                                     {"tokens", predicted},
                                     {"tokenizer", chosen->description()},
                                     {"bytes", windows.text_bytes},
                                     {"bits_per_byte", bits / static_cast<double>(windows.text_bytes)}})
                         .dump()
                  << "\n";
        return 0;
    }
    const auto sequences = read_token_file(tokens, loaded.vocab, loaded.config.model.seq_len);
    const auto [loss, predicted] = mean_loss(*loaded.model, sequences);
    if (predicted == 0)
        throw InputError("tokens file '" + tokens + "' has no line with at least two ids to predict from");
    std::cout << nlohmann::json({{"loss", loss}, {"tokens", predicted}}).dump() << "\n";
    return 0;
}

}  // namespace normlab::cli
