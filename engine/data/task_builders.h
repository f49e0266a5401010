// Private to engine/data: the builders behind make_task and the helpers the tasks share (the
// per-batch RNG seed, the hash split into train / validation, argument checks).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "engine/config/config.h"
#include "engine/config/key_range.h"
#include "engine/core/errors.h"
#include "engine/core/number_format.h"
#include "engine/core/rng.h"
#include "engine/data/task.h"

namespace normlab {

std::unique_ptr<Task> make_text_task(const DataConfig& data, int seq_len, uint64_t seed);
// `kind` is TaskKind::Copy, Reverse or Sort.
std::unique_ptr<Task> make_sequence_task(TaskKind kind, const DataConfig& data, int seq_len, uint64_t seed);
std::unique_ptr<Task> make_modadd_task(const DataConfig& data, int seq_len, uint64_t seed);

// Seed of the one generator that fills a whole batch; rows draw from it in order.
inline uint64_t batch_seed(uint64_t seed, Split split, uint64_t index) {
    return mix_seed(mix_seed(seed, static_cast<uint64_t>(split)), index);
}

// A synthetic problem belongs to the validation split when its content hash says so.
inline bool hash_in_validation(uint64_t hash, double val_fraction) {
    return static_cast<double>(hash % 1000) < val_fraction * 1000.0;
}

// Uniform in [0, n) for 64-bit n (same multiply-shift as Rng::below, so equal results for small n).
inline uint64_t below_u64(Rng& rng, uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(rng.next_u64()) * n) >> 64);
}

inline void check_batch_shape(const std::string& task, int batch_size, int seq_len, int min_seq_len) {
    if (batch_size < 1) {
        throw InputError(task + ": batch size " + std::to_string(batch_size) +
                         " is not allowed; train.batch_size must be at least 1");
    }
    if (seq_len < min_seq_len) {
        throw InputError(task + ": model.seq_len = " + std::to_string(seq_len) + " is too short; the " +
                         task + " task needs model.seq_len >= " + std::to_string(min_seq_len));
    }
}

inline void resize_batch(Batch& out, int batch_size, int seq_len) {
    out.batch = batch_size;
    out.seq = seq_len;
    const auto count = static_cast<std::size_t>(batch_size) * static_cast<std::size_t>(seq_len);
    out.inputs.assign(count, 0);
    out.targets.assign(count, -1);
}

}  // namespace normlab
