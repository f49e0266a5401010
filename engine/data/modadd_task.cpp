// The "modadd" task: rows of problems [a, +, b, =, (a + b) mod p] back to back; only the answers
// are scored. The (a, b) pairs are split by a fixed hash, so validation pairs never occur in training.
#include <cstdint>
#include <string>

#include "engine/data/task_builders.h"

namespace normlab {

namespace {

constexpr int kMinSeqLen = 4;
constexpr int kProblemTokens = 5;

class ModAddTask final : public Task {
  public:
    ModAddTask(int modulus, double val_fraction, uint64_t seed)
        : m_modulus(modulus), m_val_fraction(val_fraction), m_seed(seed) {
        check_splits();
    }

    std::string name() const override { return "modadd"; }
    int vocab_size() const override { return m_modulus + 2; }
    bool has_accuracy() const override { return true; }

    void make_batch(Split split, uint64_t index, int batch_size, int seq_len, Batch& out) const override {
        check_batch_shape("modadd", batch_size, seq_len, kMinSeqLen);
        resize_batch(out, batch_size, seq_len);
        out.source_len = kProblemTokens - 1;  // the first problem's [a, +, b, =]
        Rng rng(batch_seed(m_seed, split, index));
        const bool want_validation = split == Split::Validation;
        const int32_t plus = m_modulus;
        const int32_t equals = m_modulus + 1;
        for (int row = 0; row < batch_size; ++row) {
            // The row's seq_len + 1 tokens are built in place (no scratch): the first seq_len are the
            // inputs, and the one after them is only a target.
            const std::size_t offset = static_cast<std::size_t>(row) * static_cast<std::size_t>(seq_len);
            int32_t* tokens = out.inputs.data() + offset;
            int32_t after_row = 0;
            auto token_at = [&](int position) -> int32_t& {
                return position < seq_len ? tokens[position] : after_row;
            };
            // Problems back to back; the last one may be cut off (and then has no scored answer).
            for (int start = 0; start <= seq_len; start += kProblemTokens) {
                int a = 0;
                int b = 0;
                do {
                    a = rng.below(m_modulus);
                    b = rng.below(m_modulus);
                } while (pair_in_validation(a, b) != want_validation);
                const int32_t problem[kProblemTokens] = {a, plus, b, equals, (a + b) % m_modulus};
                for (int k = 0; k < kProblemTokens && start + k <= seq_len; ++k)
                    token_at(start + k) = problem[k];
            }
            for (int t = 0; t < seq_len; ++t) {
                out.targets[offset + t] =
                    (t + 1) % kProblemTokens == kProblemTokens - 1 ? token_at(t + 1) : -1;
            }
        }
    }

  private:
    bool pair_in_validation(int a, int b) const {
        const uint64_t hash = mix_seed(mix_seed(static_cast<uint64_t>(m_modulus), static_cast<uint64_t>(a)),
                                       static_cast<uint64_t>(b));
        return hash_in_validation(hash, m_val_fraction);
    }

    // Both splits must hold at least one pair, or rejection sampling could never finish.
    void check_splits() const {
        bool seen_train = false;
        bool seen_validation = false;
        for (int a = 0; a < m_modulus && !(seen_train && seen_validation); ++a) {
            for (int b = 0; b < m_modulus && !(seen_train && seen_validation); ++b) {
                (pair_in_validation(a, b) ? seen_validation : seen_train) = true;
            }
        }
        if (!(seen_train && seen_validation)) {
            throw InputError("modadd: data.modulus = " + std::to_string(m_modulus) + " gives only " +
                             std::to_string(m_modulus * m_modulus) + " (a, b) pairs and the " +
                             (seen_train ? "validation" : "training") + " split (data.val_fraction = " +
                             format_number(m_val_fraction) + ") gets none of them; raise data.modulus");
        }
    }

    int m_modulus;
    double m_val_fraction;
    uint64_t m_seed;
};

}  // namespace

std::unique_ptr<Task> make_modadd_task(const DataConfig& data, int seq_len, uint64_t seed) {
    const KeyRange moduli = *config_key_range("data.modulus");
    if (!moduli.contains(data.modulus)) {
        throw InputError("modadd: data.modulus = " + std::to_string(data.modulus) + " is out of range; use " +
                         std::to_string(static_cast<int>(moduli.lo)) + " to " +
                         std::to_string(static_cast<int>(moduli.hi)));
    }
    if (seq_len < kMinSeqLen) {
        throw InputError("modadd: model.seq_len = " + std::to_string(seq_len) +
                         " is too short; the modadd task needs model.seq_len >= " +
                         std::to_string(kMinSeqLen) + " (a + b = c)");
    }
    return std::make_unique<ModAddTask>(data.modulus, data.val_fraction, seed);
}

}  // namespace normlab
