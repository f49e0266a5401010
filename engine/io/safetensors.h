// Reading and writing safetensors files (float32 tensors + string metadata), the checkpoint format.
// Writes go to a temporary file renamed into place, so a crash never leaves a half-written checkpoint.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/core/write_fence.h"

namespace normlab {

struct TensorRef {
    std::string name;
    std::vector<int64_t> shape;
    const float* data = nullptr;  // product(shape) floats
};

struct LoadedTensor {
    std::vector<int64_t> shape;
    std::vector<float> data;
};

struct SafetensorsFile {
    std::map<std::string, std::string> metadata;  // the header's "__metadata__"
    std::map<std::string, LoadedTensor> tensors;
};

// "[2, 3]": a shape as messages show it.
std::string shape_to_string(const std::vector<int64_t>& shape);

// Throws InputError when the file cannot be written (ResourceError when the disk is full); `fence` as
// in write_file_atomically.
void write_safetensors(const std::string& path, const std::vector<TensorRef>& tensors,
                       const std::map<std::string, std::string>& metadata, const WriteFence& fence = {});

// The same file's bytes, in memory (a fork point kept by the window's engine thread).
std::string safetensors_bytes(const std::vector<TensorRef>& tensors,
                              const std::map<std::string, std::string>& metadata);

// The same bytes sized once, with each tensor's floats written in place by `fill(i, dst)` (dst: room for
// tensors[i]'s floats; tensors' data pointers are not read): a checkpoint copied straight from backend
// memory. `reuse`'s storage is kept when large enough (a fork point's evicted bytes); `what` names the
// checkpoint in messages, as in write_safetensors.
std::string safetensors_bytes_filled(const std::string& what, const std::vector<TensorRef>& tensors,
                                     const std::map<std::string, std::string>& metadata,
                                     const std::function<void(size_t, float*)>& fill, std::string reuse = {});

// Throws InputError naming the file and the problem: missing, truncated, bad header JSON, offsets out
// of range or overlapping, a dtype other than F32 (F16/BF16/F64 are converted), shape/size mismatch.
SafetensorsFile read_safetensors(const std::string& path);

// Only the header's "__metadata__" of a file whose header and tensor offsets check out as in
// read_safetensors (a truncated file is refused); no tensor is read.
std::map<std::string, std::string> read_safetensors_metadata(const std::string& path);

}  // namespace normlab
