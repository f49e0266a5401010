// `normlab-cli eval`: mean next-token cross-entropy of a checkpoint over a file of token sequences
// (one sequence of integer ids per line). Needs only the checkpoint, not the training data.
#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_options.h"
#include "app/cli/commands.h"
#include "engine/core/errors.h"
#include "engine/data/token_file.h"
#include "engine/io/checkpoint.h"
#include "engine/io/safetensors.h"
#include "engine/model/model.h"

namespace normlab::cli {

namespace {
const char* kEvalHelp =
    "usage: normlab-cli eval --checkpoint FILE --tokens FILE [--set device=cpu|threads=N]\n"
    "\n"
    "Prints {\"loss\": mean next-token cross-entropy over all predicted positions, \"tokens\": N}.\n"
    "The tokens file holds one sequence of integer ids per line (spaces or commas between ids); a line of\n"
    "L ids predicts L-1 positions and may hold at most model.seq_len + 1 ids. Blank lines are skipped.\n"
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

int run_eval(int argc, char** argv) {
    ArgReader reader(argc, argv, 2);
    std::string checkpoint;
    std::string tokens;
    std::vector<std::string> sets;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--help" || flag == "-h") {
            std::cout << kEvalHelp;
            return 0;
        } else if (flag == "--checkpoint") {
            checkpoint = reader.value_of(flag);
        } else if (flag == "--tokens") {
            tokens = reader.value_of(flag);
        } else if (flag == "--set") {
            sets.push_back(reader.value_of(flag));
            check_eval_assignment(sets.back());
        } else {
            throw InputError("unknown option '" + flag + "'; see normlab-cli eval --help");
        }
    }
    if (checkpoint.empty() || tokens.empty())
        throw InputError("eval needs --checkpoint FILE and --tokens FILE");

    const SafetensorsFile file = read_safetensors(checkpoint);
    Config config = checkpoint_config(checkpoint);
    for (const std::string& assignment : sets) apply_override(config, assignment);
    validate(config);
    const auto wte = file.tensors.find("wte.weight");
    if (wte == file.tensors.end() || wte->second.shape.size() != 2) {
        throw InputError("checkpoint '" + checkpoint + "' has no 2-D wte.weight tensor");
    }
    const int vocab = static_cast<int>(wte->second.shape[0]);
    const auto sequences = read_token_file(tokens, vocab, config.model.seq_len);

    std::string reason;
    auto backend = make_backend(config.device, config.threads, &reason);
    Model model(config.model, vocab, *backend);
    load_parameters(file, model, checkpoint);
    double loss_sum = 0.0;
    int64_t predicted = 0;
    Batch batch;
    for (const auto& ids : sequences) {
        if (ids.size() < 2) continue;
        batch.batch = 1;
        batch.seq = static_cast<int>(ids.size()) - 1;
        batch.inputs.assign(ids.begin(), ids.end() - 1);
        batch.targets.assign(ids.begin() + 1, ids.end());
        const ForwardStats stats = model.forward_backward(batch, false, false);
        loss_sum += stats.loss * static_cast<double>(stats.scored);
        predicted += stats.scored;
    }
    if (predicted == 0)
        throw InputError("tokens file '" + tokens + "' has no line with at least two ids to predict from");
    std::cout
        << nlohmann::json({{"loss", loss_sum / static_cast<double>(predicted)}, {"tokens", predicted}}).dump()
        << "\n";
    return 0;
}

}  // namespace normlab::cli
