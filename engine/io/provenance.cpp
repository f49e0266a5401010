// provenance_json: version.h, the trainer's backend and config, and the corpus file's identity.
#include "engine/io/provenance.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "engine/core/errors.h"
#include "engine/core/version.h"
#include "engine/data/task.h"
#include "engine/train/trainer.h"

namespace normlab {

std::string fnv1a64_of_file(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw InputError("cannot read " + path + " to hash it");
    uint64_t hash = 14695981039346656037ull;
    char buffer[1 << 16];
    while (file.read(buffer, sizeof buffer) || file.gcount() > 0) {
        for (std::streamsize i = 0; i < file.gcount(); ++i) {
            hash ^= static_cast<unsigned char>(buffer[i]);
            hash *= 1099511628211ull;
        }
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return hex;
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
    }
    out["resumed_from"] = resumed
                              ? nlohmann::json{{"checkpoint", resumed->checkpoint}, {"step", resumed->step}}
                              : nlohmann::json(nullptr);
    out["forked_from"] = resumed && !resumed->fork_of.empty()
                             ? nlohmann::json{{"run", resumed->fork_of}, {"step", resumed->step}}
                             : nlohmann::json(nullptr);
    return out;
}

}  // namespace normlab
