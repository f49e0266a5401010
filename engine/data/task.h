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

class Tokenizer;

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
    // The text task's tokenizer (engine/data/tokenizer.h); nothing for the synthetic tasks.
    virtual const Tokenizer* tokenizer() const { return nullptr; }
};

// Builds the task named by data.task. Throws InputError for an unreadable, empty or non-UTF-8 text
// file, a text shorter than two sequences, or sizes that cannot hold the task.
std::unique_ptr<Task> make_task(const DataConfig& data, int seq_len, uint64_t seed);

// The model's vocabulary for this task: model.vocab_size, or the task's when that is 0. Throws
// InputError when model.vocab_size is smaller than the task's (its tokens would fall outside wte).
int model_vocab(const ModelConfig& model, const Task& task);

// Whether building the task can fail on its data: the text task reading a file the user chose
// (data.text_path) or tokenizing through anything but bytes (a .model file to read, a BPE vocabulary the
// text must support). Callers build such a task once before a run starts, to say what is wrong.
bool task_data_can_fail(const DataConfig& data);

// The corpus that ships with NormLab (resources/corpus.txt).
std::string default_corpus_path();

}  // namespace normlab
