// provenance_json: version.h, the trainer's backend and config, and the corpus file's identity.
#include "engine/io/provenance.h"

#include <filesystem>
#include <fstream>
#include <string_view>

#include "engine/core/errors.h"
#include "engine/core/fnv1a.h"
#include "engine/core/version.h"
#include "engine/data/task.h"
#include "engine/data/tokenizer.h"
#include "engine/io/run_folder.h"
#include "engine/train/trainer.h"

namespace normlab {

std::string fnv1a64_of_file(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw InputError("cannot read " + path + " to hash it");
    Fnv1a64 hash;
    char buffer[1 << 16];
    while (file.read(buffer, sizeof buffer) || file.gcount() > 0)
        hash.update(std::string_view(buffer, static_cast<std::size_t>(file.gcount())));
    return hash.hex();
}

nlohmann::json provenance_json(const Trainer& trainer, const std::optional<ResumedFrom>& resumed) {
    const Config& config = trainer.config();
    nlohmann::json out = {{"normlab_version", version()},
                          {"commit", build_commit()},
                          {"threads", trainer.backend().threads()},
                          {"backend", trainer.backend().name()}};
    if (config.data.task == TaskKind::Text) {
        const std::string path =
            std::filesystem::absolute(config.data.text_path.empty() ? default_corpus_path()
                                                                    : config.data.text_path)
                .lexically_normal()
                .string();
        out["corpus"] = {
            {"path", path}, {"bytes", std::filesystem::file_size(path)}, {"fnv1a64", fnv1a64_of_file(path)}};
        if (const Tokenizer* tokenizer = trainer.task().tokenizer()) {
            out["tokenizer"] = {{"setting", config.data.tokenizer}, {"vocab_size", tokenizer->vocab_size()}};
            if (!tokenizer->model_proto().empty())
                out["tokenizer"].update(
                    {{"file", "tokenizer.model"}, {"fnv1a64", fnv1a64_hex(tokenizer->model_proto())}});
        }
    }
    out["resumed_from"] = resumed
                              ? nlohmann::json{{"checkpoint", resumed->checkpoint}, {"step", resumed->step}}
                              : nlohmann::json(nullptr);
    out["forked_from"] = resumed && !resumed->fork_of.empty()
                             ? nlohmann::json{{"run", resumed->fork_of}, {"step", resumed->step}}
                             : nlohmann::json(nullptr);
    return out;
}

void write_run_provenance(RunFolder& folder, const Trainer& trainer, const nlohmann::json& provenance) {
    const Tokenizer* tokenizer = trainer.task().tokenizer();
    folder.write_provenance(provenance, tokenizer ? tokenizer->model_proto() : std::string());
}

}  // namespace normlab
