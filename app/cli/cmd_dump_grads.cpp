// `normlab-cli dump-grads`: trains a few steps, writes the checkpoint, then the gradients of the next
// training batch (grad.<name>), the batch itself and its loss, for tests/parity/torch_parity.py; for a
// Hugging Face model (tests/parity/hf_parity.py) also its logits, under Hugging Face's tensor names.
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "app/cli/cli_options.h"
#include "app/cli/subcommands.h"
#include "engine/core/errors.h"
#include "engine/data/token_file.h"
#include "engine/io/checkpoint.h"
#include "engine/io/hf_weights.h"
#include "engine/io/safetensors.h"
#include "engine/train/trainer.h"

namespace normlab::cli {

namespace {
std::string exact(double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", value);
    return std::string(text);
}

// The batch of a --tokens file: every line one row, all of the same length.
Batch batch_from_tokens(const std::string& path, const Model& model) {
    const auto sequences = read_token_file(path, model.vocab(), model.config().seq_len);
    Batch batch;
    for (const auto& ids : sequences) {
        if (ids.size() < 2) continue;
        if (batch.batch > 0 && static_cast<int>(ids.size()) - 1 != batch.seq)
            throw InputError("--tokens " + path +
                             ": every line must hold as many ids as the first (one batch)");
        batch.seq = static_cast<int>(ids.size()) - 1;
        batch.inputs.insert(batch.inputs.end(), ids.begin(), ids.end() - 1);
        batch.targets.insert(batch.targets.end(), ids.begin() + 1, ids.end());
        ++batch.batch;
    }
    if (batch.batch == 0) throw InputError("--tokens " + path + " has no line of two ids or more");
    return batch;
}

// The gradients of `batch` (without updating the model) into DIR/grads.safetensors, with the batch and,
// as metadata, the cross-entropy and, apart, the z-loss term (the gradients are of their sum) and the
// encoder's source length. With a Hugging Face family: its tensor names, and the logits [n, vocab].
void write_gradients(Trainer& trainer, const Batch& batch, const std::optional<HfFamily>& family,
                     const std::string& out) {
    Model& model = trainer.model();
    model.set_training_step(trainer.steps_done() + 1);  // the step this batch would train
    std::vector<std::vector<float>> host;
    std::vector<TensorRef> tensors;
    host.reserve(model.layout().entries.size() + 3);
    if (family) {
        model.forward_backward(batch, {.backward = false});
        host.push_back(model.read_logits());
        tensors.push_back({"logits", {batch.batch * batch.seq, model.vocab()}, host.back().data()});
    }
    const ForwardStats stats = model.forward_backward(
        batch, {.backward = true, .z_loss = static_cast<float>(trainer.config().train.z_loss)});
    std::map<std::string, LoadedTensor> hf_grads;
    if (family) {
        hf_grads = hf_tensors_of(model, *family, true);
        for (const auto& [name, tensor] : hf_grads)
            tensors.push_back({"grad." + name, tensor.shape, tensor.data.data()});
    } else {
        const auto& entries = model.layout().entries;
        for (size_t i = 0; i < entries.size(); ++i) {
            if (!model.active(static_cast<int>(i))) continue;
            host.push_back(model.read_entry(static_cast<int>(i), true));
            tensors.push_back({"grad." + entries[i].name, entries[i].shape, host.back().data()});
        }
    }
    host.emplace_back(batch.inputs.begin(), batch.inputs.end());
    tensors.push_back({"batch.inputs", {batch.batch, batch.seq}, host.back().data()});
    host.emplace_back(batch.targets.begin(), batch.targets.end());
    tensors.push_back({"batch.targets", {batch.batch, batch.seq}, host.back().data()});
    write_safetensors(out + "/grads.safetensors", tensors,
                      {{"loss", exact(stats.loss)},
                       {"z_loss", exact(stats.z_loss)},
                       {"source_len", std::to_string(model.source_len())}});
}
}  // namespace

int run_dump_grads(int argc, char** argv) {
    ArgReader reader(argc, argv, 2);
    ConfigSources sources;
    sources.takes_hf_checkpoint = true;
    std::string out;
    std::string tokens;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (sources.consume(flag, reader)) continue;
        if (flag == "--help" || flag == "-h") {
            std::cout
                << "usage: normlab-cli dump-grads (--config FILE | --preset NAME) [--set ...] [--steps N] "
                   "[--tokens FILE] --out DIR\n\n"
                   "Trains N steps (default 3; 0 with --hf-checkpoint), then writes DIR/model.safetensors "
                   "and\n"
                   "DIR/grads.safetensors (grad.<tensor>, batch.inputs, batch.targets; metadata loss and, "
                   "for an\n"
                   "encoder-decoder, source_len: the encoder reads positions [0, source_len)). The batch is "
                   "the\n"
                   "next training batch, or with --tokens FILE that file's lines (one row each, equal "
                   "lengths).\n"
                   "With --hf-config the gradients carry Hugging Face's tensor names and `logits` [rows x "
                   "seq,\n"
                   "vocab] is added.\n\n"
                << config_sources_help(true);
            return 0;
        } else if (flag == "--out") {
            out = reader.value_of(flag);
        } else if (flag == "--tokens") {
            tokens = reader.value_of(flag);
        } else {
            throw InputError("unknown option '" + flag + "'; see normlab-cli dump-grads --help");
        }
    }
    if (out.empty()) throw InputError("--out DIR is required");
    // Like train and probe, the output folder is made when it does not exist yet.
    std::error_code error;
    std::filesystem::create_directories(out, error);
    if (error) throw InputError("cannot create --out " + out + ": " + error.message());
    ConfigSources run_sources = sources;
    if (!run_sources.steps) run_sources.steps = sources.hf_checkpoint ? 0 : 3;
    Trainer trainer(run_sources.resolve());
    sources.load_hf_checkpoint(trainer.model());
    while (!trainer.finished()) trainer.step();
    save_checkpoint(trainer, out + "/model.safetensors");
    Batch batch;
    if (!tokens.empty()) {
        batch = batch_from_tokens(tokens, trainer.model());
    } else {
        const Config& config = trainer.config();
        trainer.task().make_batch(Split::Train, static_cast<uint64_t>(trainer.steps_done()),
                                  config.train.batch_size, config.model.seq_len, batch);
    }
    const std::optional<HfModel> hf = sources.hf_model();
    write_gradients(trainer, batch, hf ? std::optional<HfFamily>(hf->family) : std::nullopt, out);
    std::cout << out << "\n";
    return 0;
}

}  // namespace normlab::cli
