// The "copy", "reverse" and "sort" tasks: a row is [x_1..x_n, SEP, y_1..y_n, PAD...] with y = x,
// reversed x or sorted x; only the answer y is scored. Sequences are split by a hash of x, so the
// validation sequences never occur in training.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/data/task_builders.h"

namespace normlab {

namespace {

constexpr int kMinSeqLen = 5;
constexpr uint64_t kMaxEnumerated = uint64_t{1} << 24;

// Identifies a sequence by its content x (y follows from x); independent of the run's seed.
uint64_t sequence_hash(std::span<const int32_t> x) {
    uint64_t hash = x.size();
    for (const int32_t symbol : x) hash = mix_seed(hash, static_cast<uint64_t>(symbol));
    return hash;
}

class SequenceTask final : public Task {
  public:
    SequenceTask(TaskKind kind, int symbols, double val_fraction, int seq_len, uint64_t seed)
        : m_kind(kind), m_symbols(symbols), m_val_fraction(val_fraction), m_seq_len(seq_len), m_seed(seed) {
        check_splits(content_length(seq_len), seq_len);
    }

    std::string name() const override { return to_string(m_kind); }
    int vocab_size() const override { return m_symbols + 2; }
    bool has_accuracy() const override { return true; }

    void make_batch(Split split, uint64_t index, int batch_size, int seq_len, Batch& out) const override {
        check_batch_shape(name(), batch_size, seq_len, kMinSeqLen);
        const int n = content_length(seq_len);
        if (seq_len != m_seq_len) check_splits(n, seq_len);
        resize_batch(out, batch_size, seq_len);
        out.source_len = n + 1;  // x and SEP
        Rng rng(batch_seed(m_seed, split, index));
        const bool want_validation = split == Split::Validation;
        const int32_t sep = m_symbols;
        const int32_t pad = m_symbols + 1;
        for (int row = 0; row < batch_size; ++row) {
            // The row is [x, SEP, y, PAD...], built in place (no scratch): 2n + 1 <= seq_len, so all of
            // y fits, and position t predicts the token at t + 1.
            const std::size_t offset = static_cast<std::size_t>(row) * static_cast<std::size_t>(seq_len);
            int32_t* tokens = out.inputs.data() + offset;
            const std::span<int32_t> x(tokens, static_cast<std::size_t>(n));
            // Rejection sampling: uniform over the sequences of the requested split.
            do {
                for (auto& symbol : x) symbol = rng.below(m_symbols);
            } while (hash_in_validation(sequence_hash(x), m_val_fraction) != want_validation);
            tokens[n] = sep;
            int32_t* answer = tokens + n + 1;
            std::copy(x.begin(), x.end(), answer);
            if (m_kind == TaskKind::Reverse) std::reverse(answer, answer + n);
            if (m_kind == TaskKind::Sort) std::sort(answer, answer + n);
            std::fill(answer + n, tokens + seq_len, pad);
            for (int t = 0; t < seq_len; ++t) {
                // Scored only where the next token is y_1..y_n.
                out.targets[offset + t] = (t >= n && t < 2 * n) ? tokens[t + 1] : -1;
            }
        }
    }

  private:
    static int content_length(int seq_len) { return (seq_len - 1) / 2; }

    // Both splits must hold at least one sequence, or rejection sampling could never finish.
    void check_splits(int n, int seq_len) const {
        uint64_t total = 1;
        for (int i = 0; i < n && total < kMaxEnumerated; ++i) total *= static_cast<uint64_t>(m_symbols);
        total = std::min(total, kMaxEnumerated);
        bool seen_train = false;
        bool seen_validation = false;
        std::vector<int32_t> x(static_cast<std::size_t>(n), 0);
        for (uint64_t count = 0; count < total && !(seen_train && seen_validation); ++count) {
            (hash_in_validation(sequence_hash(x), m_val_fraction) ? seen_validation : seen_train) = true;
            for (int i = n - 1; i >= 0; --i) {  // next x in lexicographic order
                if (++x[static_cast<std::size_t>(i)] < m_symbols) break;
                x[static_cast<std::size_t>(i)] = 0;
            }
        }
        if (!(seen_train && seen_validation)) {
            throw InputError(name() + ": with data.symbols = " + std::to_string(m_symbols) +
                             " and model.seq_len = " + std::to_string(seq_len) + " there are only " +
                             std::to_string(total) + " distinct sequences and the " +
                             (seen_train ? "validation" : "training") +
                             " split (data.val_fraction = " + format_number(m_val_fraction) +
                             ") gets none of them; raise data.symbols or model.seq_len");
        }
    }

    TaskKind m_kind;
    int m_symbols;
    double m_val_fraction;
    int m_seq_len;
    uint64_t m_seed;
};

}  // namespace

std::unique_ptr<Task> make_sequence_task(TaskKind kind, const DataConfig& data, int seq_len, uint64_t seed) {
    const std::string name = to_string(kind);
    if (seq_len < kMinSeqLen) {
        throw InputError(name + ": model.seq_len = " + std::to_string(seq_len) + " is too short; the " +
                         name + " task needs model.seq_len >= " + std::to_string(kMinSeqLen) +
                         " (n symbols, a separator and n answers)");
    }
    const KeyRange alphabets = *config_key_range("data.symbols");
    if (!alphabets.contains(data.symbols)) {
        throw InputError(name + ": data.symbols = " + std::to_string(data.symbols) +
                         " is out of range; it must be at least " +
                         std::to_string(static_cast<int>(alphabets.lo)) + " (and at most " +
                         std::to_string(static_cast<int>(alphabets.hi)) + ")");
    }
    return std::make_unique<SequenceTask>(kind, data.symbols, data.val_fraction, seq_len, seed);
}

}  // namespace normlab
