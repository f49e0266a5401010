// `normlab-cli probe`: measurements at initialisation (Xiong et al.'s Lemma 2 and Figure 3, Admin's
// dependency ratio, Liu et al.'s output change) written to DIR/probe.json.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_options.h"
#include "app/cli/commands.h"
#include "engine/analysis/probe.h"
#include "engine/core/errors.h"
#include "engine/io/run_folder.h"
#include "engine/train/trainer.h"

namespace normlab::cli {

namespace {
const char* kProbeHelp =
    "usage: normlab-cli probe (--config FILE | --preset NAME) [--set KEY=VALUE]... --batches K --out DIR\n"
    "                         [--overwrite]\n"
    "\n"
    "Measures the freshly initialised model on K training batches, without updating it, and writes\n"
    "DIR/probe.json: per block `resid` (E||h||^2/d averaged over the batches), `resid_attn`, `dependency`\n"
    "(Var[F(x)] / Var[x + F(x)] per sub-layer) and, for w_qkv, w_o, w_1, w_2, `mean_norm` (mean over\n"
    "batches of ||grad W||_F) and `norm_of_mean` (||mean over batches of grad W||_F, Xiong et al.'s\n"
    "Figure 3); then takes one optimizer step on batch 0 and records each block's relative output change\n"
    "`output_change` and the model's (Liu et al.'s amplification). With model.encoder_layers > 0 each\n"
    "block also has `resid_cross`, `dependency.cross` and w_cross_q, w_cross_kv, w_cross_o, and an\n"
    "`encoder` array holds the encoder's blocks (e.g. --preset theory-encdec-postln: Figure 3's setting).\n"
    "\n";
}  // namespace

int run_probe(int argc, char** argv) {
    ArgReader reader(argc, argv, 2);
    ConfigSources sources;
    std::string out;
    int64_t batches = 0;
    bool overwrite = false;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (sources.consume(flag, reader)) continue;
        if (flag == "--help" || flag == "-h") {
            std::cout << kProbeHelp << config_sources_help();
            return 0;
        } else if (flag == "--batches") {
            batches = reader.integer_of(flag, 1);
        } else if (flag == "--out") {
            out = reader.value_of(flag);
        } else if (flag == "--overwrite") {
            overwrite = true;
        } else {
            throw InputError("unknown option '" + flag + "'; see normlab-cli probe --help");
        }
    }
    if (batches < 1) throw InputError("--batches K is required (K >= 1 batches to average over)");
    if (out.empty()) throw InputError("--out DIR is required: the folder for probe.json");
    const std::string path = out + "/probe.json";
    if (std::filesystem::exists(path) && !overwrite) {
        throw InputError("'" + path + "' exists; choose another --out or pass --overwrite");
    }
    Config config = sources.resolve();
    config.train.steps = std::max(config.train.steps, 1);
    Trainer trainer(config);
    const ProbeResult probe = probe_at_init(trainer, static_cast<int>(batches));
    const OutputChange change = output_change_after_one_step(trainer);
    nlohmann::json document = to_json(probe, &change);
    document["config"] = config_to_json(config);
    std::error_code error;
    std::filesystem::create_directories(out, error);
    if (error) throw InputError("cannot create '" + out + "': " + error.message());
    write_file_atomically(path, document.dump(2) + "\n");
    std::cout << path << "\n";
    return 0;
}

}  // namespace normlab::cli
