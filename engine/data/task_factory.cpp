// make_task: checks the settings every task shares and dispatches on data.task; also says where
// the corpus that ships with NormLab lives.
#include <string>

#include "engine/core/resource_dir.h"
#include "engine/data/task_builders.h"

namespace normlab {

std::string default_corpus_path() {
    return resource_dir() + "/corpus.txt";
}

std::unique_ptr<Task> make_task(const DataConfig& data, int seq_len, uint64_t seed) {
    const char* valid_tasks = "text, copy, reverse, sort, modadd";
    const bool known = data.task == "text" || data.task == "copy" || data.task == "reverse" ||
                       data.task == "sort" || data.task == "modadd";
    if (!known) throw InputError("unknown data.task '" + data.task + "'; valid tasks are " + valid_tasks);
    if (!(data.val_fraction > 0.0 && data.val_fraction <= 0.5)) {
        throw InputError("data.val_fraction = " + format_number(data.val_fraction) +
                         " is out of range; use a value in (0, 0.5]");
    }
    if (data.task == "text") return make_text_task(data, seq_len, seed);
    if (data.task == "copy") return make_sequence_task(SequenceKind::Copy, data, seq_len, seed);
    if (data.task == "reverse") return make_sequence_task(SequenceKind::Reverse, data, seq_len, seed);
    if (data.task == "sort") return make_sequence_task(SequenceKind::Sort, data, seq_len, seed);
    return make_modadd_task(data, seq_len, seed);
}

}  // namespace normlab
