// The "text" task: byte-level language modelling over a UTF-8 file (token id = byte value).
// The last val_fraction of the bytes is the validation split; rows are windows at random starts.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "engine/data/task_builders.h"
#include "engine/data/utf8.h"

namespace normlab {

namespace {

const char* kTextPathHint =
    "point data.text_path at a UTF-8 text file (or leave it empty for the shipped corpus)";

std::string read_text_file(const std::string& path) {
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    if (!std::filesystem::exists(status)) {
        throw InputError("data.text_path: text file '" + path + "' does not exist; " + kTextPathHint);
    }
    if (std::filesystem::is_directory(status)) {
        throw InputError("data.text_path: '" + path + "' is a directory, not a text file; " + kTextPathHint);
    }
    if (!std::filesystem::is_regular_file(status)) {
        throw InputError("data.text_path: '" + path + "' is not a regular file (a device, pipe or socket); " +
                         kTextPathHint);
    }
    // The whole text is held in memory (and indexed): a file beyond this is refused before reading.
    constexpr uintmax_t kMaxTextBytes = uintmax_t{1} << 30;
    if (const uintmax_t size = std::filesystem::file_size(path, error); !error && size > kMaxTextBytes) {
        throw InputError("data.text_path: text file '" + path + "' is " + std::to_string(size >> 20) +
                         " MiB; NormLab reads at most 1024 MiB of text into memory: use a smaller file "
                         "(a slice of it)");
    }
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        throw InputError("data.text_path: text file '" + path +
                         "' cannot be opened (check its permissions); " + kTextPathHint);
    }
    std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (file.bad()) {
        throw InputError("data.text_path: reading text file '" + path + "' failed; " + kTextPathHint);
    }
    return bytes;
}

class TextTask final : public Task {
  public:
    TextTask(std::string path, std::string bytes, std::size_t train_bytes, uint64_t seed)
        : m_path(std::move(path)), m_bytes(std::move(bytes)), m_train_bytes(train_bytes), m_seed(seed) {}

    std::string name() const override { return "text"; }
    int vocab_size() const override { return 256; }
    bool has_accuracy() const override { return false; }

    void make_batch(Split split, uint64_t index, int batch_size, int seq_len, Batch& out) const override {
        check_batch_shape("text", batch_size, seq_len, 1);
        const std::size_t begin = split == Split::Train ? 0 : m_train_bytes;
        const std::size_t end = split == Split::Train ? m_train_bytes : m_bytes.size();
        const auto window = static_cast<std::size_t>(seq_len) + 1;
        if (end - begin < window) {
            throw InputError("text: the " + std::string(split == Split::Train ? "training" : "validation") +
                             " split of '" + m_path + "' has " + std::to_string(end - begin) +
                             " bytes, fewer than model.seq_len + 1 = " + std::to_string(window) +
                             "; use a longer text or a smaller model.seq_len");
        }
        resize_batch(out, batch_size, seq_len);
        out.source_len = std::max(1, seq_len / 2);  // the first half of the window
        Rng rng(batch_seed(m_seed, split, index));
        const uint64_t starts = end - begin - window + 1;
        for (int row = 0; row < batch_size; ++row) {
            const std::size_t start = begin + static_cast<std::size_t>(below_u64(rng, starts));
            const std::size_t offset = static_cast<std::size_t>(row) * static_cast<std::size_t>(seq_len);
            for (int t = 0; t < seq_len; ++t) {
                out.inputs[offset + t] = static_cast<uint8_t>(m_bytes[start + t]);
                out.targets[offset + t] = static_cast<uint8_t>(m_bytes[start + t + 1]);
            }
        }
    }

  private:
    std::string m_path;
    std::string m_bytes;
    std::size_t m_train_bytes;
    uint64_t m_seed;
};

}  // namespace

std::unique_ptr<Task> make_text_task(const DataConfig& data, int seq_len, uint64_t seed) {
    if (seq_len < 1) {
        throw InputError("text: model.seq_len = " + std::to_string(seq_len) +
                         " is too short; it must be at least 1");
    }
    const std::string path = data.text_path.empty() ? default_corpus_path() : data.text_path;
    std::string bytes = read_text_file(path);
    const auto window = static_cast<std::size_t>(seq_len) + 1;
    const std::size_t needed = 2 * window;
    if (bytes.empty()) {
        throw InputError("data.text_path: text file '" + path + "' is empty; it needs at least " +
                         std::to_string(needed) +
                         " bytes of UTF-8 text for model.seq_len = " + std::to_string(seq_len));
    }
    if (const auto error = find_utf8_error(bytes)) {
        throw InputError("data.text_path: text file '" + path + "' is not valid UTF-8: " + error->reason +
                         " at byte offset " + std::to_string(error->offset) + "; re-save it as UTF-8");
    }
    if (bytes.size() < needed) {
        throw InputError("data.text_path: text file '" + path + "' has " + std::to_string(bytes.size()) +
                         " bytes, but model.seq_len = " + std::to_string(seq_len) + " needs at least " +
                         std::to_string(needed) + " bytes (" + std::to_string(window) + " for training and " +
                         std::to_string(window) +
                         " for validation); use a longer text or a smaller model.seq_len");
    }
    // The validation split is the tail: val_fraction of the bytes, but never less than one window.
    const auto fraction_bytes =
        static_cast<std::size_t>(static_cast<double>(bytes.size()) * data.val_fraction);
    const std::size_t val_bytes = std::max(window, fraction_bytes);
    const std::size_t train_bytes = bytes.size() - val_bytes;
    return std::make_unique<TextTask>(path, std::move(bytes), train_bytes, seed);
}

}  // namespace normlab
