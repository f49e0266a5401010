// `normlab-cli probe --freeze-norms`: the norm-free inference probe on a checkpoint (each norm's
// per-token scale replaced by its held-out mean, one at a time and all at once, optionally frozen one
// by one with fine-tuning between), written to DIR/freeze_norms.json and printed as a table.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/cli_options.h"
#include "app/cli/subcommands.h"
#include "engine/analysis/norm_freezing.h"
#include "engine/core/errors.h"
#include "engine/core/number_format.h"
#include "engine/io/checkpoint.h"
#include "engine/io/run_folder.h"
#include "engine/train/trainer.h"

namespace normlab::cli {

namespace {
const char* kFreezeHelp =
    "usage: normlab-cli probe --freeze-norms --checkpoint FILE --out DIR [--batches K] [--finetune-steps S]\n"
    "                         [--finetune-lr LR] [--order ffn-first|forward] [--overwrite]\n"
    "\n"
    "Norm-free inference (Heimersheim 2024): replaces each norm's per-token scale 1/std by a constant, the\n"
    "mean of its per-token std over K held-out batches (default 16; LayerNorm still subtracts each token's\n"
    "mean), and reports the held-out loss with each norm frozen alone (with the coefficient of variation of\n"
    "its per-token std, and the rank correlation of the two over the norms) and with all frozen at once.\n"
    "With --finetune-steps S it then freezes the norms one by one, each at its mean on the model fine-tuned\n"
    "so far, with S training steps after each, and compares the result with the same number of steps with\n"
    "no norm frozen (the control). --order ffn-first (the default, Heimersheim's): every FFN sub-layer's\n"
    "norm, then every attention sub-layer's, then the final norms; --order forward: in forward order.\n"
    "Fine-tuning runs at a constant learning rate, --finetune-lr (default: the checkpoint's train.lr / 10),\n"
    "from the checkpoint's optimizer state and data position.\n"
    "Needs LayerNorm or RMSNorm (DyT, BatchNorm and PowerNorm have no per-token scale); QK-norm's norms are\n"
    "left as they are.\n"
    "\n"
    "Writes DIR/freeze_norms.json (docs/formats.md#freeze_normsjson) and prints one line per norm.\n";

struct FreezeOptions {
    std::string checkpoint, out, finetune_lr;
    int batches = 16;
    FinetunePlan finetune;
    bool overwrite = false;
};

FreezeOptions read_freeze_options(int argc, char** argv) {
    ArgReader reader(argc, argv, 2);
    FreezeOptions options;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--freeze-norms") continue;
        if (flag == "--checkpoint") {
            options.checkpoint = reader.value_of(flag);
        } else if (flag == "--out") {
            options.out = reader.value_of(flag);
        } else if (flag == "--batches") {
            options.batches = static_cast<int>(reader.integer_of(flag, 1, 100000));
        } else if (flag == "--finetune-steps") {
            options.finetune.steps_per_norm = static_cast<int>(reader.integer_of(flag, 1, 10000000));
        } else if (flag == "--order") {
            options.finetune.order = freeze_order_from_string(reader.value_of(flag));
        } else if (flag == "--finetune-lr") {
            options.finetune_lr = reader.value_of(flag);
        } else if (flag == "--overwrite") {
            options.overwrite = true;
        } else {
            throw InputError("unknown option '" + flag +
                             "' for probe --freeze-norms; see normlab-cli probe " + "--freeze-norms --help");
        }
    }
    if (options.checkpoint.empty()) throw InputError("probe --freeze-norms needs --checkpoint FILE");
    if (options.out.empty()) throw InputError("--out DIR is required: the folder for freeze_norms.json");
    if (!options.finetune_lr.empty() && options.finetune.steps_per_norm == 0)
        throw InputError("--finetune-lr needs --finetune-steps S (S >= 1)");
    return options;
}

// A trainer for fine-tuning from the checkpoint: constant learning rate, room for `steps` more steps.
std::unique_ptr<Trainer> finetune_trainer(const FreezeOptions& options, int64_t checkpoint_step,
                                          int64_t steps) {
    const Config config = checkpoint_config(options.checkpoint);
    const std::string lr =
        options.finetune_lr.empty() ? format_number(config.train.lr / 10.0) : options.finetune_lr;
    return load_checkpoint(options.checkpoint,
                           {"train.schedule=constant", "train.warmup_steps=0", "train.lr=" + lr,
                            "train.steps=" + std::to_string(checkpoint_step + steps)});
}

void print_result(const NormFreezingResult& result) {
    std::printf("held-out loss %.4f over %d batches\n%-24s %10s %8s %10s %10s\n", result.baseline_loss,
                result.batches, "norm frozen", "mean std", "CV", "loss", "change");
    for (const FrozenNorm& norm : result.one_at_a_time) {
        std::printf("%-24s %10.4g %8.3f %10.4f %+10.4f\n", norm.name.c_str(), norm.scale.mean_std,
                    norm.scale.cv, norm.loss, norm.loss - result.baseline_loss);
    }
    std::printf("%-24s %10s %8s %10.4f %+10.4f\n", "all at once", "", "", result.all_at_once_loss,
                result.all_at_once_loss - result.baseline_loss);
    std::printf("rank correlation of change and CV over the norms: %.2f\n",
                result.change_cv_rank_correlation);
    if (result.steps_per_norm <= 0 || result.stages.empty()) return;
    const double final_loss = result.stages.back().loss_after;
    std::printf(
        "fine-tuned (%s), %d steps after each freeze at lr %g: %.4f (control without freezing %.4f, "
        "%+.4f)\n",
        result.order.c_str(), result.steps_per_norm, result.finetune_lr, final_loss, result.control_loss,
        final_loss - result.control_loss);
    if (result.diverged_at >= 0)
        std::printf("fine-tuning diverged at step %lld\n", (long long)result.diverged_at);
}
}  // namespace

bool wants_freeze_norms(int argc, char** argv) {
    return has_flag(argc, argv, "--freeze-norms");
}

int run_freeze_norms_probe(int argc, char** argv) {
    if (asks_for_help(argc, argv)) {
        std::cout << kFreezeHelp;
        return 0;
    }
    const FreezeOptions options = read_freeze_options(argc, argv);
    const std::string path = result_path(options.out, "freeze_norms.json", options.overwrite);
    std::unique_ptr<Trainer> trainer = load_checkpoint(options.checkpoint, {});
    NormFreezingResult result = freeze_norms_probe(*trainer, options.batches);
    if (options.finetune.steps_per_norm > 0) {
        const int64_t total = static_cast<int64_t>(options.finetune.steps_per_norm) *
                              static_cast<int64_t>(trainer->model().scaled_norms().size());
        std::unique_ptr<Trainer> frozen = finetune_trainer(options, trainer->steps_done(), total);
        std::unique_ptr<Trainer> control = finetune_trainer(options, trainer->steps_done(), total);
        trainer.reset();
        finetune_with_frozen_norms(*frozen, *control, options.finetune, result);
    }
    nlohmann::json document = to_json(result);
    document["checkpoint"] = options.checkpoint;
    print_result(result);
    write_result(options.out, path, document.dump(2) + "\n");
    return 0;
}

}  // namespace normlab::cli
