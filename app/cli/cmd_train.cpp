// `normlab-cli train`: builds the trainer (validating everything before the run folder exists), then
// trains it into the run folder (train_loop.h). Ctrl-C stops cleanly.
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/cli_options.h"
#include "app/cli/subcommands.h"
#include "app/cli/train_fork.h"
#include "app/cli/train_loop.h"
#include "app/cli/train_seeds.h"
#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"
#include "engine/io/provenance.h"
#include "engine/io/records_json.h"
#include "engine/io/run_folder.h"
#include "engine/train/live_changes.h"
#include "engine/train/trainer.h"

namespace normlab::cli {

namespace {
const char* kTrainHelp =
    "usage: normlab-cli train (--config FILE | --preset NAME) [--set KEY=VALUE]... [--steps N] --out DIR\n"
    "                         [--hf-config CONFIG.json] [--hf-checkpoint MODEL.safetensors]\n"
    "                         [--save-checkpoint] [--resume CHECKPOINT] [--change [STEP:]KEY=VALUE]...\n"
    "                         [--overwrite] [--quiet] [--seeds N|A-B|a,b,c]\n"
    "       normlab-cli train --fork RUN_DIR --at N [--set KEY=VALUE]... [--steps M] --out DIR [...]\n"
    "\n"
    "Trains a model and writes the run folder DIR incrementally: config.json, metrics.jsonl,\n"
    "events.jsonl, summary.json (and model.safetensors with --save-checkpoint). metrics.jsonl has one\n"
    "line per step (val_loss on validation steps); per-layer telemetry every telemetry.every steps.\n"
    "Exit code 0 when the run completed or diverged (a divergence is a result), 130 when stopped by a\n"
    "signal, 2 on bad input or when the run folder cannot be written (disk full), 1 on an internal\n"
    "error. A run that fails part-way leaves summary.json with status \"failed\" and the error.\n"
    "\n"
    "model.residual=deepnorm and admin are Post-LN schemes (docs/science.md); with another\n"
    "model.norm_placement they scale that wiring's shortcut instead, as an experiment (a note says so).\n"
    "\n";

// The options after the config sources; the live keys come from the engine's own list.
std::string train_help_tail() {
    std::string live;
    for (const std::string& key : live_keys()) live += (live.empty() ? "" : ", ") + key;
    return "  --out DIR            the run folder (must be new or empty, unless --overwrite)\n"
           "  --save-checkpoint    write DIR/model.safetensors at the end (optimizer state included); with\n"
           "                       --set train.checkpoint_every=N it is also replaced every N steps\n"
           "  --resume FILE        continue from a checkpoint (its config; --set / --steps still apply;\n"
           "                       --steps must go beyond the checkpoint's step); DIR/model.safetensors\n"
           "                       with --out DIR continues that folder, keeping its history and checkpoint\n"
           "  --fork RUN_DIR --at N  a new run that starts from RUN_DIR's checkpoint at step N (keep them "
           "with\n"
           "                       train.checkpoint_every and train.checkpoint_keep) and sees the same "
           "batches;\n"
           "                       DIR starts with RUN_DIR's steps 1..N; a --set of a live key is a change\n"
           "                       before step N+1, other --set values and --steps apply as for --resume\n"
           "  --change S:KEY=VAL   a live change applied before step S, e.g. --change "
           "200:model.norm_placement=pre;\n"
           "                       every change is checked before the run starts. Live keys (device and "
           "threads\n"
           "                       move the run to a new backend, losing nothing; reinit_deepnorm_beta is "
           "an\n"
           "                       action): " +
           live +
           "\n"
           "  --quiet              no progress lines on stderr\n" +
           seed_group_help() +
           "Exit code 130 when stopped by Ctrl-C or SIGTERM (the run folder says \"stopped\").\n";
}

// What `train` was asked to do; `help` when it only prints its help.
struct TrainOptions {
    ConfigSources sources;
    std::string out;
    std::string resume;
    std::optional<ForkRequest> fork;
    bool save = false;
    bool overwrite = false;
    bool quiet = false;
    bool help = false;
    std::vector<LiveChange> changes;
    std::vector<uint64_t> seeds;  // --seeds: a seed group (train_seeds.h)
};

void check_fork_options(const TrainOptions& options) {
    const ForkRequest& fork = *options.fork;
    if (fork.parent.empty()) throw InputError("--at N needs --fork RUN_DIR: the run to fork");
    if (fork.at < 0) throw InputError("--fork needs --at N: the step to fork at");
    if (!options.resume.empty()) throw InputError("--fork and --resume exclude each other; pass one");
    if (!options.seeds.empty())
        throw InputError("--fork branches one run; fork each run of a seed group on its own (drop --seeds)");
    std::error_code error;
    if (std::filesystem::equivalent(fork.parent, options.out, error) && !error)
        throw InputError("--out is the run being forked; a fork needs a folder of its own");
}

TrainOptions parse_train_options(int argc, char** argv) {
    ArgReader reader(argc, argv, 2);
    TrainOptions options;
    options.sources.takes_hf_checkpoint = true;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (options.sources.consume(flag, reader)) continue;
        if (flag == "--help" || flag == "-h") {
            options.help = true;
            return options;
        } else if (flag == "--out") {
            options.out = reader.value_of(flag);
        } else if (flag == "--resume") {
            options.resume = reader.value_of(flag);
        } else if (flag == "--fork") {
            if (!options.fork) options.fork.emplace();
            options.fork->parent = reader.value_of(flag);
        } else if (flag == "--at") {
            if (!options.fork) options.fork.emplace();
            options.fork->at = reader.integer_of(flag, 0, std::numeric_limits<int64_t>::max());
        } else if (flag == "--save-checkpoint") {
            options.save = true;
        } else if (flag == "--overwrite") {
            options.overwrite = true;
        } else if (flag == "--quiet") {
            options.quiet = true;
        } else if (flag == "--seeds") {
            options.seeds = parse_seed_list(reader.value_of(flag));
        } else if (flag == "--change") {
            options.changes.push_back(parse_live_change(reader.value_of(flag)));
        } else {
            throw InputError("unknown option '" + flag + "'; see normlab-cli train --help");
        }
    }
    if (options.out.empty()) throw InputError("--out DIR is required: the run folder to write");
    if ((options.sources.hf_config || options.sources.hf_checkpoint) &&
        (options.fork || !options.resume.empty()))
        throw InputError(
            "--hf-config / --hf-checkpoint start a new run; --resume and --fork continue one "
            "from its own checkpoint: pass one or the other");
    if (options.fork) check_fork_options(options);
    return options;
}

// A new trainer from the config sources, or one resumed from a checkpoint that has steps left to train
// (a fork's checkpoint: `changes` gains its live --set values).
std::unique_ptr<Trainer> make_trainer(const TrainOptions& options, const std::string& checkpoint,
                                      std::vector<LiveChange>& changes) {
    const ConfigSources& sources = options.sources;
    if (options.fork) return make_fork_trainer(*options.fork, checkpoint, sources, changes);
    if (options.resume.empty()) {
        auto trainer = std::make_unique<Trainer>(sources.resolve());
        sources.load_hf_checkpoint(trainer->model());
        return trainer;
    }
    if (sources.config_path || sources.preset)
        throw InputError("--resume takes its config from the checkpoint; drop --config / --preset");
    std::vector<std::string> overrides = sources.sets;
    if (sources.steps) overrides.push_back("train.steps=" + std::to_string(*sources.steps));
    std::unique_ptr<Trainer> trainer = load_checkpoint(options.resume, overrides);
    if (trainer->steps_done() >= trainer->config().train.steps)
        throw InputError("the checkpoint is at step " + std::to_string(trainer->steps_done()) +
                         " and train.steps is " + std::to_string(trainer->config().train.steps) +
                         ": nothing to train; pass --steps N with N > " +
                         std::to_string(trainer->steps_done()));
    return trainer;
}

// --resume names a checkpoint inside --out: the folder is continued, not replaced.
bool resumes_in_place(const TrainOptions& options) {
    if (options.resume.empty()) return false;
    const std::filesystem::path parent = std::filesystem::path(options.resume).parent_path();
    std::error_code error;
    return std::filesystem::equivalent(parent.empty() ? "." : parent, options.out, error) && !error;
}

// The run folder: continued in place (its history and checkpoint kept; --overwrite is not needed),
// else a new one (an old one is emptied only with --overwrite).
std::unique_ptr<RunFolder> open_run_folder(const TrainOptions& options, const Trainer& trainer,
                                           int64_t first_step) {
    if (resumes_in_place(options))
        return std::make_unique<RunFolder>(options.out, trainer.config(),
                                           RunFolder::ContinueFrom{first_step});
    if (options.fork)
        return std::make_unique<RunFolder>(options.out, trainer.config(),
                                           RunFolder::ForkOf{options.fork->parent, first_step},
                                           options.overwrite);
    return std::make_unique<RunFolder>(options.out, trainer.config(), options.overwrite);
}

// Where an imported model came from: the config.json and the checkpoint, each with its FNV-1a hash.
nlohmann::json hf_provenance(const std::string& config, const std::optional<std::string>& checkpoint) {
    nlohmann::json out = {{"config", config}, {"config_fnv1a64", fnv1a64_of_file(config)}};
    if (checkpoint && !std::filesystem::is_directory(*checkpoint)) {
        out["checkpoint"] = *checkpoint;
        out["checkpoint_fnv1a64"] = fnv1a64_of_file(*checkpoint);
    } else if (checkpoint) {
        out["checkpoint"] = *checkpoint;  // a folder of shards: named, not hashed
    }
    return out;
}

void announce_start(const Trainer& trainer, const std::string& out) {
    std::cerr << "normlab-cli train: " << trainer.config().train.steps << " steps on "
              << trainer.backend().name() << " (" << trainer.device_reason() << "), run folder " << out
              << "\n";
    const std::string note = wiring_note(trainer.config().model);
    if (!note.empty()) std::cerr << "normlab-cli train: note: " << note << "\n";
}

// --save-checkpoint: after the summary, so a checkpoint that cannot be written does not hide how the
// run ended; a failure is recorded in the summary and rethrown.
void save_final_checkpoint(Trainer& trainer, RunFolder& folder, PeriodicCheckpoint& checkpoints,
                           nlohmann::json& summary) {
    try {
        checkpoints.save(trainer);
        checkpoints.annotate(summary);
        folder.write_summary(summary);
    } catch (const std::exception& error) {
        summary["checkpoint_error"] = error.what();
        try {
            folder.write_summary(summary);
        } catch (const std::exception&) {
        }
        throw;
    }
}

int train_one_run(const TrainOptions& options) {
    const std::string checkpoint = options.fork ? fork_checkpoint(*options.fork) : options.resume;
    std::vector<LiveChange> changes = options.changes;
    std::unique_ptr<Trainer> trainer = make_trainer(options, checkpoint, changes);
    const int64_t first_step = trainer->steps_done();
    validate_planned_changes(trainer->config(), first_step, trainer->config().train.steps, changes);
    for (const LiveChange& change : changes) trainer->post(change);

    const std::unique_ptr<RunFolder> opened = open_run_folder(options, *trainer, first_step);
    RunFolder& folder = *opened;
    nlohmann::json provenance = provenance_json(
        *trainer,
        checkpoint.empty()
            ? std::nullopt
            : std::optional<ResumedFrom>{{checkpoint, first_step, options.fork ? options.fork->parent : ""}});
    if (const std::optional<std::string> hf = options.sources.hf_config_path())
        provenance["hugging_face"] = hf_provenance(*hf, options.sources.hf_checkpoint);
    write_run_provenance(folder, *trainer, provenance);
    if (!options.quiet) announce_start(*trainer, options.out);
    if (!options.quiet && !options.sources.hf_checkpoint)
        if (const std::optional<HfModel> hf = options.sources.hf_model())
            for (const std::string& note : hf->notes)
                std::cerr << "normlab-cli train: note: " << note << "\n";
    TrainLoopOptions loop;
    loop.quiet = options.quiet;
    PeriodicCheckpoint checkpoints = PeriodicCheckpoint::for_run(folder.path(), trainer->config());
    if (resumes_in_place(options)) checkpoints.note_saved(first_step);  // the file kept holds that step
    nlohmann::json summary = train_into_folder(*trainer, folder, first_step, loop, checkpoints);
    if (options.save) save_final_checkpoint(*trainer, folder, checkpoints, summary);
    std::cout << summary.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    if (!options.quiet)
        std::cerr << "normlab-cli train: " << summary["status"].get<std::string>()
                  << "; run folder: " << options.out << "\n";
    return trainer->status() == RunStatus::Stopped ? 130 : 0;  // a script can tell Ctrl-C from the end
}

// --seeds: the same run once per seed, each into its own folder of the group.
int train_group(const TrainOptions& options) {
    const SeedGroupRequest request{options.seeds, options.out, options.overwrite, !options.resume.empty(),
                                   options.resume.empty() ? options.sources.resolve() : Config{}};
    if (!request.resume)  // every change checked before the group folder exists, as for one run
        validate_planned_changes(request.config, 0, request.config.train.steps, options.changes);
    return train_seed_group(request, [&options](uint64_t seed, const std::string& folder, bool overwrite) {
        TrainOptions one = options;
        one.sources.sets.push_back("train.seed=" + std::to_string(seed));
        one.out = folder;
        one.overwrite = overwrite;
        return train_one_run(one);
    });
}

}  // namespace

int run_train(int argc, char** argv) {
    const TrainOptions options = parse_train_options(argc, argv);
    if (options.help) {
        std::cout << kTrainHelp << config_sources_help(true) << train_help_tail() << "\n"
                  << config_keys_help();
        return 0;
    }
    return options.seeds.empty() ? train_one_run(options) : train_group(options);
}

}  // namespace normlab::cli
