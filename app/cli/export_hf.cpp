// `normlab-cli export --hf DIR`: a NormLab checkpoint of the Llama or GPT-2 family written as a Hugging
// Face folder (config.json + model.safetensors) that transformers' from_pretrained loads and evaluates
// to the same loss (tests/parity/hf_parity.py). Any other model is refused with what keeps it out.
#include <filesystem>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/cli_options.h"
#include "app/cli/subcommands.h"
#include "engine/backend/backend.h"
#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"
#include "engine/io/hf_weights.h"
#include "engine/model/model.h"

namespace normlab::cli {

namespace {
namespace fs = std::filesystem;

const char* kExportHfUsage =
    "usage: normlab-cli export --hf DIR (--checkpoint FILE | --run RUN_DIR) [--overwrite]\n"
    "\n"
    "Writes DIR/config.json and DIR/model.safetensors: the checkpoint (or RUN_DIR/model.safetensors, a\n"
    "run trained with --save-checkpoint) as a Hugging Face LlamaForCausalLM or GPT2LMHeadModel, which\n"
    "transformers loads with from_pretrained(DIR). The model must be one of the two: Pre-LN, plain\n"
    "residual, no QK-norm, decoder-only; RMSNorm + RoPE + a gated FFN (Llama) or LayerNorm + learned\n"
    "positions + an MLP with biases (GPT-2). A DIR that holds files is kept unless --overwrite.\n";

struct ExportHfRequest {
    std::string out, checkpoint;
    bool overwrite = false, help = false;
};

ExportHfRequest parse_request(int argc, char** argv) {
    ArgReader reader(argc, argv, 2);
    ExportHfRequest request;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--help" || flag == "-h") {
            request.help = true;
        } else if (flag == "--hf") {
            request.out = reader.value_of(flag);
        } else if (flag == "--checkpoint" || flag == "--run") {
            if (!request.checkpoint.empty()) throw InputError("give one --checkpoint FILE or --run RUN_DIR");
            const std::string value = reader.value_of(flag);
            request.checkpoint = flag == "--run" ? (fs::path(value) / "model.safetensors").string() : value;
            if (flag == "--run" && !fs::exists(request.checkpoint))
                throw InputError("run folder " + value +
                                 " has no model.safetensors; train it with --save-checkpoint");
        } else if (flag == "--overwrite") {
            request.overwrite = true;
        } else {
            throw InputError("unknown option '" + flag +
                             "' for export --hf; see normlab-cli export --hf DIR --help");
        }
    }
    if (request.help) return request;
    if (request.out.empty()) throw InputError("--hf needs a folder to write: --hf DIR");
    if (request.checkpoint.empty()) throw InputError("export --hf needs --checkpoint FILE or --run RUN_DIR");
    std::error_code error;
    if (fs::exists(request.out, error) && !fs::is_empty(request.out, error) && !request.overwrite)
        throw InputError("--hf " + request.out + " already holds files; pass --overwrite to replace them");
    return request;
}
}  // namespace

int run_export_hf(int argc, char** argv) {
    const ExportHfRequest request = parse_request(argc, argv);
    if (request.help) {
        std::cout << kExportHfUsage;
        return 0;
    }
    const SafetensorsFile file = read_safetensors(request.checkpoint);
    const Config config = checkpoint_config(request.checkpoint);
    const HfFamily family = hf_family_of(config.model);  // before anything is written
    const int vocab = checkpoint_vocab(file, request.checkpoint);
    std::string reason;
    const std::unique_ptr<Backend> backend = make_backend("cpu", config.threads, &reason);
    Model model(config.model, vocab, *backend);
    load_parameters(file, model, request.checkpoint);

    const std::map<std::string, LoadedTensor> tensors = hf_tensors_of(model, family, false);
    std::vector<TensorRef> refs;
    for (const auto& [name, tensor] : tensors) refs.push_back({name, tensor.shape, tensor.data.data()});
    std::error_code error;
    fs::create_directories(request.out, error);
    if (error) throw InputError("cannot create --hf " + request.out + ": " + error.message());
    write_safetensors((fs::path(request.out) / "model.safetensors").string(), refs, {{"format", "pt"}});
    write_file_atomically((fs::path(request.out) / "config.json").string(),
                          hf_config_json(config.model, vocab).dump(2) + "\n");
    std::cerr << "normlab-cli export: " << to_string(family) << " model (" << tensors.size()
              << " tensors) to " << request.out << "\n";
    std::cout << request.out << "\n";
    return 0;
}

}  // namespace normlab::cli
