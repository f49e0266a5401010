// `normlab-cli probe`: measurements at initialisation (Xiong et al.'s Lemma 2 and Figure 3, Admin's
// dependency ratio, Liu et al.'s output change) written to DIR/probe.json.
#include <algorithm>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/cli_options.h"
#include "app/cli/subcommands.h"
#include "engine/analysis/probe.h"
#include "engine/analysis/probe_average.h"
#include "engine/core/errors.h"
#include "engine/io/run_folder.h"
#include "engine/train/trainer.h"

namespace normlab::cli {

namespace {
const char* kProbeHelp =
    "usage: normlab-cli probe (--config FILE | --preset NAME) [--set KEY=VALUE]... --batches K --out DIR\n"
    "                         [--seeds N] [--overwrite]\n"
    "\n"
    "Measures the freshly initialised model on K training batches, without updating it, and writes\n"
    "DIR/probe.json: per block `resid` (E||h||^2/d averaged over the batches), `resid_attn`, `dependency`\n"
    "(Var[F(x)] / Var[x + F(x)] per sub-layer) and, for w_qkv, w_o, w_1, w_2, `mean_norm` (mean over\n"
    "batches of ||grad W||_F) and `norm_of_mean` (||mean over batches of grad W||_F, Xiong et al.'s\n"
    "Figure 3); then takes one optimizer step on batch 0 and records each block's relative output change\n"
    "`output_change` and the model's (Liu et al.'s amplification). With model.encoder_layers > 0 each\n"
    "block also has `resid_cross`, `dependency.cross` and w_cross_q, w_cross_kv, w_cross_o, and an\n"
    "`encoder` array holds the encoder's blocks (e.g. --preset theory-encdec-postln: Figure 3's setting).\n"
    "\n"
    "--seeds N   probe N initialisations (seeds train.seed .. train.seed + N - 1, default 1) and write\n"
    "            their field-by-field mean, with `seeds` and each seed's w_2 profile in `per_seed`\n"
    "\n"
    "Prints the (decoder's) w_2 norm_of_mean per block with last/first and max/min, then the file's path.\n"
    "\n"
    "normlab-cli probe --freeze-norms --checkpoint FILE ...: norm-free inference on a trained model\n"
    "(normlab-cli probe --freeze-norms --help).\n"
    "normlab-cli probe --coord-check --widths 64,128,256 ...: muP's coordinate check over widths\n"
    "(normlab-cli probe --coord-check --help).\n"
    "\n";

// Probes `seeds` initialisations (seeds train.seed ..) on `batches` batches each: the document of their
// mean, with the seeds and each one's w_2 profile, and the mean's w_2 profile printed.
nlohmann::json probe_seeds(const Config& config, int64_t batches, int64_t seeds) {
    std::vector<ProbeResult> probes;
    std::vector<OutputChange> changes;
    nlohmann::json seed_list = nlohmann::json::array();
    nlohmann::json per_seed = nlohmann::json::array();
    for (int64_t i = 0; i < seeds; ++i) {
        Config seeded = config;
        seeded.train.seed = config.train.seed + static_cast<uint64_t>(i);
        Trainer trainer(seeded);
        probes.push_back(probe_at_init(trainer, static_cast<int>(batches)));
        changes.push_back(output_change_after_one_step(trainer));
        const ProfileShape shape = w2_profile(probes.back());
        seed_list.push_back(seeded.train.seed);
        per_seed.push_back({{"seed", seeded.train.seed},
                            {"w_2_norm_of_mean", shape.values},
                            {"last_over_first", shape.last_over_first},
                            {"max_over_min", shape.max_over_min}});
        if (seeds > 1) std::cout << "seed " << seeded.train.seed << ": " << describe(shape) << "\n";
    }
    const ProbeResult probe = average_probes(probes);
    const OutputChange change = average_output_changes(changes);
    nlohmann::json document = to_json(probe, &change);
    document["seeds"] = std::move(seed_list);
    if (seeds > 1) document["per_seed"] = std::move(per_seed);
    document["config"] = config_to_json(config);
    std::cout << "w_2 norm_of_mean per block" << (seeds > 1 ? ", mean of the seeds: " : ": ")
              << describe(w2_profile(probe)) << "\n";
    return document;
}
}  // namespace

int run_probe(int argc, char** argv) {
    if (wants_freeze_norms(argc, argv)) return run_freeze_norms_probe(argc, argv);
    if (wants_coord_check(argc, argv)) return run_coord_check_probe(argc, argv);
    ArgReader reader(argc, argv, 2);
    ConfigSources sources;
    std::string out;
    int64_t batches = 0;
    int64_t seeds = 1;
    bool overwrite = false;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--steps")
            throw InputError("probe measures a model at initialisation and trains no steps; drop --steps");
        if (sources.consume(flag, reader)) continue;
        if (flag == "--help" || flag == "-h") {
            std::cout << kProbeHelp << config_sources_help();
            return 0;
        } else if (flag == "--batches") {
            batches = reader.integer_of(flag, 1);
        } else if (flag == "--seeds") {
            seeds = reader.integer_of(flag, 1, 1000);
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
    const std::string path = result_path(out, "probe.json", overwrite);
    Config config = sources.resolve();
    config.train.steps = std::max(config.train.steps, 1);
    const nlohmann::json document = probe_seeds(config, batches, seeds);
    write_result(out, path, document.dump(2) + "\n");
    return 0;
}

}  // namespace normlab::cli
