// What reproduces a run, written once into its folder as provenance.json: the NormLab version and
// commit, the thread count actually used (never 0), the backend, the corpus file with its size and an
// FNV-1a 64-bit hash of its bytes (text task), the tokenizer (data.tokenizer, its vocabulary and, for a
// SentencePiece one, the hash of tokenizer.model beside it), and for a resumed run the checkpoint and step it
// continues (and the parent run of a fork). config.json stays the config alone, so every config reader keeps
// reading it.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace normlab {

class RunFolder;
class Trainer;

struct ResumedFrom {
    std::string checkpoint;
    int64_t step = 0;
    std::string fork_of;  // the parent run folder of a fork (train --fork); empty for --resume
};

nlohmann::json provenance_json(const Trainer& trainer, const std::optional<ResumedFrom>& resumed);
// Writes `provenance` into the run folder, with the trainer's SentencePiece tokenizer as tokenizer.model
// when the run has one (RunFolder::write_provenance).
void write_run_provenance(RunFolder& folder, const Trainer& trainer, const nlohmann::json& provenance);
// FNV-1a 64-bit over a file's bytes, as 16 hex digits; throws InputError when it cannot be read.
std::string fnv1a64_of_file(const std::string& path);

}  // namespace normlab
