// Safetensors checkpoints: an 8-byte little-endian header length, a JSON header naming each tensor's
// dtype, shape and byte range, then the raw little-endian data. Writing emits float32 only; reading
// validates every header field against the file before allocating and converts F16/BF16/F64 to float.
#include "engine/io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <system_error>

#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/memory_check.h"
#include "engine/core/small_file.h"

namespace normlab {

static_assert(std::endian::native == std::endian::little,
              "safetensors I/O copies raw little-endian bytes and needs a little-endian host");
static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559, "float must be IEEE binary32");
static_assert(sizeof(double) == 8 && std::numeric_limits<double>::is_iec559, "double must be IEEE binary64");

std::string shape_to_string(const std::vector<int64_t>& shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i > 0) text += ", ";
        text += std::to_string(shape[i]);
    }
    return text + "]";
}

namespace {

namespace fs = std::filesystem;

constexpr uint64_t k_header_length_bytes = 8;
constexpr uint64_t k_max_header_bytes = 100ull * 1000 * 1000;
constexpr const char* k_metadata_key = "__metadata__";

enum class Dtype { f32, f16, bf16, f64 };

struct DtypeInfo {
    Dtype dtype;
    uint64_t size;
};

// One tensor entry of a parsed header, validated against the data section but not yet read.
struct TensorEntry {
    std::string name;
    DtypeInfo dtype;
    std::vector<int64_t> shape;
    uint64_t element_count = 0;
    uint64_t begin = 0;
    uint64_t end = 0;
};

std::string quoted(const std::string& text) {
    return "'" + text + "'";
}

// Builds InputErrors that all start with "checkpoint '<path>'".
class ReadErrors {
  public:
    explicit ReadErrors(const std::string& path) : m_path(path) {}
    const std::string& path() const { return m_path; }

    InputError error(const std::string& problem) const {
        return InputError("checkpoint " + quoted(m_path) + " " + problem);
    }

    InputError bad_tensor(const std::string& name, const std::string& problem) const {
        return error("has a bad header entry for tensor " + quoted(name) + ": " + problem +
                     "; the file is corrupt or was not written as safetensors");
    }

  private:
    std::string m_path;
};

DtypeInfo parse_dtype(const ReadErrors& errors, const std::string& name, const std::string& dtype) {
    if (dtype == "F32") return {Dtype::f32, 4};
    if (dtype == "F16") return {Dtype::f16, 2};
    if (dtype == "BF16") return {Dtype::bf16, 2};
    if (dtype == "F64") return {Dtype::f64, 8};
    throw errors.error("stores tensor " + quoted(name) + " as dtype " + quoted(dtype) +
                       ", which NormLab cannot load; only F32, F16, BF16 and F64 are accepted, so "
                       "convert the tensor to a floating-point dtype before loading");
}

// Reads a JSON integer that must be >= 0, naming `what` in the error.
uint64_t parse_non_negative(const ReadErrors& errors, const std::string& name, const nlohmann::json& value,
                            const std::string& what) {
    if (!value.is_number_integer()) {
        throw errors.bad_tensor(name, what + " must be an integer but is " + json_excerpt(value));
    }
    if (!value.is_number_unsigned() && value.get<int64_t>() < 0) {
        throw errors.bad_tensor(name, what + " is negative (" + json_excerpt(value) + ")");
    }
    return value.get<uint64_t>();
}

const nlohmann::json& require_field(const ReadErrors& errors, const std::string& name,
                                    const nlohmann::json& entry, const char* field) {
    const auto found = entry.find(field);
    if (found == entry.end()) {
        throw errors.bad_tensor(name, std::string("the field '") + field + "' is missing");
    }
    return *found;
}

TensorEntry parse_tensor_entry(const ReadErrors& errors, const std::string& name, const nlohmann::json& entry,
                               uint64_t data_size) {
    if (!entry.is_object()) {
        throw errors.bad_tensor(name, "expected an object with dtype, shape and data_offsets but found " +
                                          std::string(entry.type_name()));
    }
    TensorEntry tensor;
    tensor.name = name;

    const nlohmann::json& dtype = require_field(errors, name, entry, "dtype");
    if (!dtype.is_string())
        throw errors.bad_tensor(name, "'dtype' must be a string but is " + json_excerpt(dtype));
    tensor.dtype = parse_dtype(errors, name, dtype.get<std::string>());

    const nlohmann::json& shape = require_field(errors, name, entry, "shape");
    if (!shape.is_array())
        throw errors.bad_tensor(name, "'shape' must be an array but is " + json_excerpt(shape));
    bool has_zero_dim = false;
    bool count_overflows = false;
    uint64_t element_count = 1;
    for (size_t axis = 0; axis < shape.size(); ++axis) {
        const uint64_t dim =
            parse_non_negative(errors, name, shape[axis], "shape[" + std::to_string(axis) + "]");
        if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            throw errors.bad_tensor(
                name, "shape[" + std::to_string(axis) + "] = " + std::to_string(dim) + " is too large");
        }
        tensor.shape.push_back(static_cast<int64_t>(dim));
        if (dim == 0) has_zero_dim = true;
        if (dim != 0 && element_count > std::numeric_limits<uint64_t>::max() / dim) count_overflows = true;
        if (!count_overflows) element_count *= dim;
    }
    tensor.element_count = has_zero_dim ? 0 : element_count;
    const bool bytes_overflow =
        !has_zero_dim &&
        (count_overflows || tensor.element_count > std::numeric_limits<uint64_t>::max() / tensor.dtype.size);

    const nlohmann::json& offsets = require_field(errors, name, entry, "data_offsets");
    if (!offsets.is_array() || offsets.size() != 2) {
        throw errors.bad_tensor(
            name, "'data_offsets' must be an array [begin, end] but is " + json_excerpt(offsets));
    }
    tensor.begin = parse_non_negative(errors, name, offsets[0], "data_offsets[0]");
    tensor.end = parse_non_negative(errors, name, offsets[1], "data_offsets[1]");
    if (tensor.end < tensor.begin) {
        throw errors.bad_tensor(name, "data_offsets end < begin (" + std::to_string(tensor.begin) + ".." +
                                          std::to_string(tensor.end) + ")");
    }
    if (tensor.end > data_size) {
        throw errors.error("is truncated: tensor " + quoted(name) + " needs bytes " +
                           std::to_string(tensor.begin) + ".." + std::to_string(tensor.end) +
                           " but the data section has " + std::to_string(data_size) +
                           " bytes; the file was cut short, so write the checkpoint again");
    }
    const uint64_t range_bytes = tensor.end - tensor.begin;
    if (bytes_overflow || tensor.element_count * tensor.dtype.size != range_bytes) {
        throw errors.bad_tensor(name, "shape " + shape_to_string(tensor.shape) + " of dtype " +
                                          dtype.get<std::string>() + " does not fit its data_offsets " +
                                          std::to_string(tensor.begin) + ".." + std::to_string(tensor.end) +
                                          " (" + std::to_string(range_bytes) + " bytes)");
    }
    return tensor;
}

std::map<std::string, std::string> parse_metadata(const ReadErrors& errors, const nlohmann::json& metadata) {
    if (!metadata.is_object()) {
        throw errors.error("has a '__metadata__' entry that is " + std::string(metadata.type_name()) +
                           " instead of an object of strings; the file is corrupt or not safetensors");
    }
    std::map<std::string, std::string> result;
    for (const auto& [key, value] : metadata.items()) {
        if (!value.is_string()) {
            throw errors.error("has '__metadata__' key " + quoted(text_excerpt(key)) + " whose value " +
                               json_excerpt(value) +
                               " is not a string; safetensors metadata holds strings only");
        }
        result.emplace(key, value.get<std::string>());
    }
    return result;
}

// Rejects two tensors whose byte ranges share a byte (empty tensors share none).
void check_no_overlap(const ReadErrors& errors, const std::vector<TensorEntry>& entries) {
    std::vector<const TensorEntry*> by_begin;
    for (const TensorEntry& entry : entries) {
        if (entry.end > entry.begin) by_begin.push_back(&entry);
    }
    std::sort(by_begin.begin(), by_begin.end(),
              [](const TensorEntry* a, const TensorEntry* b) { return a->begin < b->begin; });
    for (size_t i = 1; i < by_begin.size(); ++i) {
        const TensorEntry& previous = *by_begin[i - 1];
        const TensorEntry& current = *by_begin[i];
        if (current.begin < previous.end) {
            throw errors.error("has tensors " + quoted(previous.name) + " (bytes " +
                               std::to_string(previous.begin) + ".." + std::to_string(previous.end) +
                               ") and " + quoted(current.name) + " (bytes " + std::to_string(current.begin) +
                               ".." + std::to_string(current.end) +
                               ") whose data ranges overlap; the file is corrupt");
        }
    }
}

float half_to_float(uint16_t bits) {
    const uint32_t sign = static_cast<uint32_t>(bits >> 15) << 31;
    const uint32_t exponent = (bits >> 10) & 0x1Fu;
    const uint32_t mantissa = bits & 0x3FFu;
    if (exponent == 0) {
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    uint32_t float_bits = 0;
    if (exponent == 0x1F) {
        float_bits = sign | 0x7F800000u | (mantissa << 13);
    } else {
        float_bits = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
    }
    return std::bit_cast<float>(float_bits);
}

float bfloat16_to_float(uint16_t bits) {
    return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

// Narrows with IEEE round-to-nearest, giving +-infinity past the float range instead of undefined behaviour.
float double_to_float(double value) {
    constexpr double overflow_threshold =
        static_cast<double>(std::numeric_limits<float>::max()) + 0x1.0p103;  // half an ulp above FLT_MAX
    if (std::isfinite(value) && std::fabs(value) >= overflow_threshold) {
        return value > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
    }
    return static_cast<float>(value);
}

template <typename Bits, typename Convert>
void convert_elements(const std::vector<unsigned char>& bytes, std::vector<float>& out, Convert convert) {
    for (size_t i = 0; i < out.size(); ++i) {
        Bits bits;
        std::memcpy(&bits, bytes.data() + i * sizeof(Bits), sizeof(Bits));
        out[i] = convert(bits);
    }
}

LoadedTensor read_tensor_data(const ReadErrors& errors, const RegularFile& file, uint64_t data_start,
                              const TensorEntry& entry) {
    LoadedTensor tensor;
    tensor.shape = entry.shape;
    tensor.data.resize(entry.element_count);
    const uint64_t byte_count = entry.end - entry.begin;
    if (byte_count == 0) return tensor;

    const uint64_t offset = data_start + entry.begin;
    const auto fail = [&]() {
        return errors.error("could not be read: reading tensor " + quoted(entry.name) +
                            " failed; check that the file is not being changed while it is loaded");
    };
    if (entry.dtype.dtype == Dtype::f32) {
        if (file.read_at(offset, tensor.data.data(), byte_count) != byte_count) {
            throw fail();
        }
        return tensor;
    }
    std::vector<unsigned char> bytes(byte_count);
    if (file.read_at(offset, bytes.data(), byte_count) != byte_count) {
        throw fail();
    }
    switch (entry.dtype.dtype) {
        case Dtype::f16:
            convert_elements<uint16_t>(bytes, tensor.data, half_to_float);
            break;
        case Dtype::bf16:
            convert_elements<uint16_t>(bytes, tensor.data, bfloat16_to_float);
            break;
        case Dtype::f64:
            convert_elements<uint64_t>(bytes, tensor.data, [](uint64_t bits) {
                return double_to_float(std::bit_cast<double>(bits));
            });
            break;
        case Dtype::f32:
            break;
    }
    return tensor;
}

uint64_t element_count_for_write(const std::string& what, const TensorRef& tensor) {
    uint64_t count = 1;
    for (const int64_t dim : tensor.shape) {
        if (dim < 0) {
            throw InputError("cannot write " + what + ": tensor " + quoted(tensor.name) +
                             " has a negative dimension in shape " + shape_to_string(tensor.shape));
        }
        count *= static_cast<uint64_t>(dim);
    }
    return count;
}

std::string header_length_bytes(uint64_t length) {
    std::string bytes(k_header_length_bytes, '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((length >> (8 * i)) & 0xFFu);
    return bytes;
}

}  // namespace

namespace {
// The header (padded to 8 bytes) and each tensor's byte count, checked: `what` names the destination in
// messages ("checkpoint 'x.safetensors'").
std::pair<std::string, std::vector<uint64_t>> safetensors_header(
    const std::string& what, const std::vector<TensorRef>& tensors,
    const std::map<std::string, std::string>& metadata, bool data_given = true) {
    const std::string cannot_write = "cannot write " + what + ": ";

    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty()) header[k_metadata_key] = metadata;
    std::set<std::string> names;
    std::vector<uint64_t> byte_counts;
    uint64_t offset = 0;
    for (const TensorRef& tensor : tensors) {
        if (tensor.name == k_metadata_key) {
            throw InputError(cannot_write +
                             "a tensor may not be named '__metadata__', which safetensors "
                             "reserves for metadata; rename the tensor");
        }
        if (!names.insert(tensor.name).second) {
            throw InputError(cannot_write + "the tensor name " + quoted(tensor.name) +
                             " appears twice; every tensor needs a unique name");
        }
        const uint64_t count = element_count_for_write(what, tensor);
        if (count > 0 && data_given && tensor.data == nullptr) {
            throw InputError(cannot_write + "tensor " + quoted(tensor.name) + " of shape " +
                             shape_to_string(tensor.shape) + " has no data pointer");
        }
        const uint64_t byte_count = count * sizeof(float);
        header[tensor.name] = {
            {"dtype", "F32"}, {"shape", tensor.shape}, {"data_offsets", {offset, offset + byte_count}}};
        byte_counts.push_back(byte_count);
        offset += byte_count;
    }

    std::string header_text;
    try {
        header_text = header.dump();
    } catch (const nlohmann::json::exception& error) {
        throw InputError(cannot_write + "a tensor name or metadata string is not valid UTF-8 (" +
                         error.what() + "); use UTF-8 text");
    }
    header_text.append((8 - header_text.size() % 8) % 8, ' ');
    return {std::move(header_text), std::move(byte_counts)};
}

void write_safetensors_to(std::ostream& out, const std::string& header_text,
                          const std::vector<uint64_t>& byte_counts, const std::vector<TensorRef>& tensors) {
    out.write(header_length_bytes(header_text.size()).data(), k_header_length_bytes);
    out.write(header_text.data(), static_cast<std::streamsize>(header_text.size()));
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (byte_counts[i] == 0) continue;
        out.write(reinterpret_cast<const char*>(tensors[i].data),
                  static_cast<std::streamsize>(byte_counts[i]));
    }
}
}  // namespace

void write_safetensors(const std::string& path, const std::vector<TensorRef>& tensors,
                       const std::map<std::string, std::string>& metadata, const WriteFence& fence) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
    const auto header = safetensors_header("checkpoint " + quoted(path), tensors, metadata);
    write_file_atomically(
        path, [&](std::ostream& file) { write_safetensors_to(file, header.first, header.second, tensors); },
        "cannot write checkpoint " + quoted(path), fence);
}

std::string safetensors_bytes(const std::vector<TensorRef>& tensors,
                              const std::map<std::string, std::string>& metadata) {
    const auto [header_text, byte_counts] = safetensors_header("a checkpoint in memory", tensors, metadata);
    std::ostringstream out;
    write_safetensors_to(out, header_text, byte_counts, tensors);
    return std::move(out).str();
}

std::string safetensors_bytes_filled(const std::string& what, const std::vector<TensorRef>& tensors,
                                     const std::map<std::string, std::string>& metadata,
                                     const std::function<void(size_t, float*)>& fill, std::string reuse) {
    const auto [header_text, byte_counts] = safetensors_header(what, tensors, metadata, false);
    uint64_t data_bytes = 0;
    for (const uint64_t count : byte_counts) data_bytes += count;
    // resize keeps the old bytes and writes only past them: a reused buffer of the same size costs
    // neither a fresh allocation's page faults nor a pass of zeros
    std::string bytes = std::move(reuse);
    bytes.resize(k_header_length_bytes + header_text.size() + data_bytes);
    std::memcpy(bytes.data(), header_length_bytes(header_text.size()).data(), k_header_length_bytes);
    std::memcpy(bytes.data() + k_header_length_bytes, header_text.data(), header_text.size());
    char* data = bytes.data() + k_header_length_bytes + header_text.size();  // 8-byte aligned: padded header
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (byte_counts[i] > 0) fill(i, reinterpret_cast<float*>(data));
        data += byte_counts[i];
    }
    return bytes;
}

namespace {
// Refuses, before anything is allocated, tensors that need more memory than the machine has, or far
// more bytes than the file system stores for the file: a sparse file (4 GB declared, 4 KB on disk) is
// not a checkpoint anyone wrote. Small files and file systems that report no blocks are not judged.
void check_data_is_stored(const ReadErrors& errors, const RegularFile& file,
                          const std::vector<TensorEntry>& entries) {
    constexpr uint64_t kJudgedFrom = 16ull << 20;
    uint64_t declared = 0, floats = 0;
    for (const TensorEntry& entry : entries) {
        declared += entry.end - entry.begin;
        floats += entry.element_count;
    }
    const uint64_t stored = file.stored_bytes();
    if (declared >= kJudgedFrom && stored > 0 && stored < declared / 8) {
        throw errors.error("declares " + std::to_string(declared >> 20) + " MB of tensor data but only " +
                           std::to_string(stored >> 10) +
                           " KB of it is stored on disk (a sparse file); it was not written whole, so "
                           "use another checkpoint");
    }
    check_memory(floats * sizeof(float), "loading the tensors of checkpoint " + quoted(errors.path()));
}

// The 8-byte little-endian header length, checked against the limit and the file's size.
uint64_t read_header_length(const ReadErrors& errors, const RegularFile& file) {
    const uint64_t file_size = file.size();
    if (file_size < k_header_length_bytes) {
        throw errors.error("is truncated: it has " + std::to_string(file_size) +
                           " bytes, fewer than the 8-byte header length; the file was cut short or is not "
                           "safetensors");
    }
    unsigned char length_bytes[k_header_length_bytes];
    if (file.read_at(0, length_bytes, k_header_length_bytes) != k_header_length_bytes) {
        throw errors.error("could not be read: the header length is unreadable");
    }
    uint64_t header_length = 0;
    for (size_t i = 0; i < k_header_length_bytes; ++i)
        header_length |= static_cast<uint64_t>(length_bytes[i]) << (8 * i);
    if (header_length > k_max_header_bytes) {
        throw errors.error("declares a header of " + std::to_string(header_length) +
                           " bytes, more than the 100 MB limit; the file is corrupt or not safetensors");
    }
    if (header_length > file_size - k_header_length_bytes) {
        throw errors.error("is truncated: its header needs " + std::to_string(header_length) +
                           " bytes but only " + std::to_string(file_size - k_header_length_bytes) +
                           " follow the header length; the file was cut short, so write it again");
    }
    return header_length;
}

// The JSON object of `header_length` bytes that follows the length.
nlohmann::json read_header(const ReadErrors& errors, const RegularFile& file, uint64_t header_length) {
    std::string header_text(header_length, '\0');
    if (file.read_at(k_header_length_bytes, header_text.data(), header_length) != header_length) {
        throw errors.error("could not be read: reading the header failed");
    }
    nlohmann::json header;
    try {
        header = parse_json(header_text, "its header");
    } catch (const InputError& error) {  // a syntax error, a number beyond double's range, too deep
        throw errors.error("has a header that is not valid JSON (" + std::string(error.what()) +
                           "); the file is corrupt or not safetensors");
    }
    if (!header.is_object()) {
        throw errors.error("has a header that is not a JSON object but " + std::string(header.type_name()) +
                           "; the file is corrupt or not safetensors");
    }
    return header;
}
}  // namespace

namespace {
// The header of an open file: its metadata and tensor entries, offsets checked against the file's size.
struct ParsedHeader {
    std::map<std::string, std::string> metadata;
    std::vector<TensorEntry> entries;
    uint64_t data_start = 0;
};

ParsedHeader parse_header(const ReadErrors& errors, const RegularFile& file) {
    const uint64_t header_length = read_header_length(errors, file);
    const nlohmann::json header = read_header(errors, file, header_length);
    ParsedHeader parsed;
    parsed.data_start = k_header_length_bytes + header_length;
    const uint64_t data_size = file.size() - parsed.data_start;
    for (const auto& [key, value] : header.items()) {
        if (key == k_metadata_key) {
            parsed.metadata = parse_metadata(errors, value);
        } else {
            parsed.entries.push_back(parse_tensor_entry(errors, key, value, data_size));
        }
    }
    check_no_overlap(errors, parsed.entries);
    return parsed;
}
}  // namespace

std::map<std::string, std::string> read_safetensors_metadata(const std::string& path) {
    const ReadErrors errors(path);
    return parse_header(errors, RegularFile::open(path, "checkpoint")).metadata;
}

SafetensorsFile read_safetensors(const std::string& path) {
    const ReadErrors errors(path);
    const RegularFile file = RegularFile::open(path, "checkpoint");
    ParsedHeader parsed = parse_header(errors, file);
    const std::vector<TensorEntry>& entries = parsed.entries;
    const uint64_t data_start = parsed.data_start;
    SafetensorsFile result;
    result.metadata = std::move(parsed.metadata);
    check_data_is_stored(errors, file, entries);

    for (const TensorEntry& entry : entries) {
        result.tensors.emplace(entry.name, read_tensor_data(errors, file, data_start, entry));
    }
    return result;
}

}  // namespace normlab
