// `normlab-cli dump-grads`: trains a few steps, writes the checkpoint, then the gradients of the next
// training batch (grad.<name>), the batch itself and its loss, for tests/parity/torch_parity.py.
#include <filesystem>
#include <iostream>

#include "app/cli/cli_options.h"
#include "app/cli/commands.h"
#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"
#include "engine/io/safetensors.h"
#include "engine/train/trainer.h"

namespace normlab::cli {

namespace {
std::string exact(double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", value);
    return std::string(text);
}

// The gradients of the trainer's next batch (without updating the model) into DIR/grads.safetensors,
// with the batch and, as metadata, the cross-entropy and, apart, the z-loss term (the gradients are of
// their sum) and the encoder's source length.
void write_next_batch_gradients(Trainer& trainer, const std::string& out) {
    Batch batch;
    const Config& config = trainer.config();
    trainer.task().make_batch(Split::Train, static_cast<uint64_t>(trainer.steps_done()),
                              config.train.batch_size, config.model.seq_len, batch);
    Model& model = trainer.model();
    model.set_training_step(trainer.steps_done() + 1);  // the step this batch would train
    const ForwardStats stats =
        model.forward_backward(batch, true, false, static_cast<float>(config.train.z_loss));
    std::vector<std::vector<float>> host;
    std::vector<TensorRef> tensors;
    const auto& entries = model.layout().entries;
    host.reserve(entries.size() + 2);
    for (size_t i = 0; i < entries.size(); ++i) {
        if (!model.active(static_cast<int>(i))) continue;
        host.push_back(model.read_entry(static_cast<int>(i), true));
        tensors.push_back({"grad." + entries[i].name, entries[i].shape, host.back().data()});
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
    std::string out;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (sources.consume(flag, reader)) continue;
        if (flag == "--help" || flag == "-h") {
            std::cout
                << "usage: normlab-cli dump-grads (--config FILE | --preset NAME) [--set ...] [--steps N] "
                   "--out DIR\n\n"
                   "Trains N steps (default 3), then writes DIR/model.safetensors and DIR/grads.safetensors\n"
                   "(grad.<tensor>, batch.inputs, batch.targets; metadata loss and, for an encoder-decoder,\n"
                   "source_len: the encoder reads positions [0, source_len)).\n\n"
                << config_sources_help();
            return 0;
        } else if (flag == "--out") {
            out = reader.value_of(flag);
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
    if (!run_sources.steps) run_sources.steps = 3;
    Trainer trainer(run_sources.resolve());
    while (!trainer.finished()) trainer.step();
    save_checkpoint(trainer, out + "/model.safetensors");
    write_next_batch_gradients(trainer, out);
    std::cout << out << "\n";
    return 0;
}

}  // namespace normlab::cli
