// Training tasks: a source of (input, target) token batches with a held-out validation split.
// Batches are a pure function of (seed, split, index), so runs and resumes are reproducible.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/config.h"

namespace normlab {

enum class Split { Train, Validation };

// Row-major [batch, seq] token ids; a target of -1 is not scored (prompt part of synthetic tasks).
// source_len: positions [0, source_len) of every row are its source, what an encoder may read without
// seeing a token the decoder must predict (synthetic tasks: the prompt; text: the first half of the
// window); 0: not given (an encoder-decoder model then takes the first half).
struct Batch {
    int batch = 0;
    int seq = 0;
    std::vector<int32_t> inputs;
    std::vector<int32_t> targets;
    int source_len = 0;
};

class Task {
  public:
    virtual ~Task() = default;
    virtual std::string name() const = 0;
    virtual int vocab_size() const = 0;
    // Synthetic tasks report accuracy on the answer part (argmax == target over scored positions).
    virtual bool has_accuracy() const = 0;
    // Deterministic in (construction seed, split, index); resizes and fills `out`.
    virtual void make_batch(Split split, uint64_t index, int batch_size, int seq_len, Batch& out) const = 0;
};

// Builds the task named by data.task. Throws InputError for an unreadable, empty or non-UTF-8 text
// file, a text shorter than two sequences, or sizes that cannot hold the task.
std::unique_ptr<Task> make_task(const DataConfig& data, int seq_len, uint64_t seed);

// The model's vocabulary for this task: model.vocab_size, or the task's when that is 0. Throws
// InputError when model.vocab_size is smaller than the task's (its tokens would fall outside wte).
int model_vocab(const ModelConfig& model, const Task& task);

// Whether the task reads a text file the user chose (the text task with data.text_path set): the one
// task whose data can be missing or malformed, so callers check it before a run starts.
bool reads_chosen_text_file(const DataConfig& data);

// The corpus that ships with NormLab (resources/corpus.txt).
std::string default_corpus_path();

}  // namespace normlab
