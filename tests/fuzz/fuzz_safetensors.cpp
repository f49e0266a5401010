// Feeds the input as a .safetensors file to read_safetensors and checkpoint_config. Beyond no crash:
// only InputError escapes, every tensor holds product(shape) floats, and a file read is written back
// and read again bit for bit (tensors, shapes and metadata).
#include <cstring>

#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"
#include "engine/io/safetensors.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using normlab::InputError;
using normlab::SafetensorsFile;

uint64_t element_count(const std::vector<int64_t>& shape) {
    uint64_t count = 1;
    for (const int64_t dim : shape) count *= static_cast<uint64_t>(dim);
    return count;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

void check_rewrite(const SafetensorsFile& file, const std::string& path) {
    std::vector<normlab::TensorRef> tensors;
    for (const auto& [name, tensor] : file.tensors)
        tensors.push_back({name, tensor.shape, tensor.data.data()});
    normlab::write_safetensors(path, tensors, file.metadata);
    const SafetensorsFile again = normlab::read_safetensors(path);
    FUZZ_CHECK(again.metadata == file.metadata, "metadata changed when written back");
    FUZZ_CHECK(again.tensors.size() == file.tensors.size(), "tensor count changed when written back");
    for (const auto& [name, tensor] : file.tensors) {
        const auto found = again.tensors.find(name);
        FUZZ_CHECK(found != again.tensors.end(), "tensor '" + name + "' lost when written back");
        FUZZ_CHECK(found->second.shape == tensor.shape, "shape of '" + name + "' changed when written back");
        FUZZ_CHECK(same_bits(found->second.data, tensor.data),
                   "data of '" + name + "' changed when written back");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::filesystem::path dir = normlab::fuzz::fresh_dir("safetensors");
    const std::string path = (dir / "input.safetensors").string();
    normlab::fuzz::write_file(path, normlab::fuzz::as_text(data, size));
    SafetensorsFile file;
    try {
        file = normlab::read_safetensors(path);
    } catch (const InputError&) {
        return 0;
    }
    for (const auto& [name, tensor] : file.tensors)
        FUZZ_CHECK(tensor.data.size() == element_count(tensor.shape),
                   "tensor '" + name + "' size != its shape");
    try {
        normlab::checkpoint_config(path);
    } catch (const InputError&) {
    }
    check_rewrite(file, (dir / "rewritten.safetensors").string());
    return 0;
}
