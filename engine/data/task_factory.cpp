// make_task: checks the settings every task shares and dispatches on data.task; also says where
// the corpus that ships with NormLab lives, which tasks' data can fail, and the model's
// vocabulary for a task.
#include <string>

#include "engine/core/resource_dir.h"
#include "engine/data/task_builders.h"

namespace normlab {

std::string default_corpus_path() {
    return resource_dir() + "/corpus.txt";
}

int model_vocab(const ModelConfig& model, const Task& task) {
    if (model.vocab_size == 0) return task.vocab_size();
    if (model.vocab_size < task.vocab_size()) {
        throw InputError("model.vocab_size = " + std::to_string(model.vocab_size) + " is smaller than the " +
                         task.name() + " task's " + std::to_string(task.vocab_size()) +
                         " tokens; set it to 0 (the data's vocabulary) or to at least " +
                         std::to_string(task.vocab_size()));
    }
    return model.vocab_size;
}

std::unique_ptr<Task> make_task(const DataConfig& data, int seq_len, uint64_t seed) {
    const KeyRange fractions = *config_key_range("data.val_fraction");
    if (!fractions.contains(data.val_fraction)) {
        throw InputError("data.val_fraction = " + format_number(data.val_fraction) +
                         " is out of range; use a value in " + interval_text(fractions, false));
    }
    switch (data.task) {
        case TaskKind::Text:
            return make_text_task(data, seq_len, seed);
        case TaskKind::Copy:
        case TaskKind::Reverse:
        case TaskKind::Sort:
            return make_sequence_task(data.task, data, seq_len, seed);
        case TaskKind::ModAdd:
            return make_modadd_task(data, seq_len, seed);
    }
    std::string valid_tasks;
    for (const std::string& name : config_key_choices("data.task"))
        valid_tasks += (valid_tasks.empty() ? "" : ", ") + name;
    throw InputError("data.task holds no known task (" + std::to_string(static_cast<int>(data.task)) +
                     "); valid tasks are " + valid_tasks);
}

bool task_data_can_fail(const DataConfig& data) {
    return data.task == TaskKind::Text && (!data.text_path.empty() || data.tokenizer != "bytes");
}

}  // namespace normlab
