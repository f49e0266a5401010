// Tests for the safetensors checkpoint reader and writer: bit-exact round trips, the on-disk layout of the
// real spec (hand-built files with F16/BF16/F64), and an InputError naming the problem for every kind of
// broken, truncated or garbage file.
#include "engine/io/safetensors.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/core/errors.h"
#include "engine/core/rng.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {

namespace fs = std::filesystem;

// Passes when `action` throws an InputError whose message contains every one of `fragments`.
::testing::AssertionResult throws_input_error(const std::function<void()>& action,
                                              const std::vector<std::string>& fragments) {
    try {
        action();
    } catch (const InputError& error) {
        const std::string message = error.what();
        for (const std::string& fragment : fragments) {
            if (message.find(fragment) == std::string::npos) {
                return ::testing::AssertionFailure()
                       << "InputError message \"" << message << "\" lacks \"" << fragment << "\"";
            }
        }
        return ::testing::AssertionSuccess();
    } catch (const std::exception& error) {
        return ::testing::AssertionFailure() << "threw a non-InputError: " << error.what();
    }
    return ::testing::AssertionFailure() << "threw nothing";
}

std::string little_endian_u64(uint64_t value) {
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
    return bytes;
}

template <typename T>
std::string raw_bytes(const std::vector<T>& values) {
    std::string bytes(values.size() * sizeof(T), '\0');
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

uint32_t float_bits(float value) {
    return std::bit_cast<uint32_t>(value);
}

class Safetensors : public ::testing::Test {
  protected:
    std::string path_of(const std::string& name) const { return m_folder / name; }

    std::string write_bytes(const std::string& name, const std::string& bytes) const {
        const std::string path = path_of(name);
        std::ofstream file(path, std::ios::binary | std::ios::trunc);
        file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return path;
    }

    // A file with the given header text (unpadded, exactly as given) and data section.
    std::string write_file(const std::string& name, const std::string& header,
                           const std::string& data) const {
        return write_bytes(name, little_endian_u64(header.size()) + header + data);
    }

    static std::string read_bytes(const std::string& path) {
        std::ifstream file(path, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    }

    // Writes a small valid checkpoint and returns its path.
    std::string write_valid(const std::string& name) const {
        const std::vector<float> weight = {1.0f, -2.0f, 3.5f, 0.25f, 8.0f, -0.125f};
        const std::vector<float> bias = {0.5f, -0.5f};
        const std::string path = path_of(name);
        write_safetensors(path, {{"wte.weight", {2, 3}, weight.data()}, {"bias", {2}, bias.data()}},
                          {{"step", "10"}});
        return path;
    }

    const testing::TestFolder m_folder;
};

TEST_F(Safetensors, RoundTripsTensorsAndMetadataBitExact) {
    const std::vector<float> weight = {1.0f,
                                       -0.0f,
                                       std::numeric_limits<float>::denorm_min(),
                                       std::numeric_limits<float>::max(),
                                       -std::numeric_limits<float>::infinity(),
                                       std::bit_cast<float>(0x7FC01234u),
                                       0.1f,
                                       -3.25e-20f,
                                       1.0f / 3.0f,
                                       42.0f,
                                       -1.0f,
                                       std::numeric_limits<float>::lowest()};
    const float scalar = 2.5f;
    const float single = -7.0f;
    const std::vector<float> bias = {0.125f, -0.375f, 9.0f};
    const std::map<std::string, std::string> metadata = {
        {"config", R"({"d_model": 64, "norm": "pre", "note": "a \"quoted\" word\nand a newline"})"},
        {"step", "1200"},
        {"empty", ""},
        {"unicode", "d\xC3\xA9j\xC3\xA0 vu"}};
    const std::string path = path_of("model.safetensors");
    write_safetensors(path,
                      {{"wte.weight", {3, 4}, weight.data()},
                       {"scale", {}, &scalar},
                       {"gain", {1}, &single},
                       {"empty", {0, 5}, nullptr},
                       {"blocks.0.bias", {3}, bias.data()}},
                      metadata);

    const SafetensorsFile loaded = read_safetensors(path);
    EXPECT_EQ(loaded.metadata, metadata);
    ASSERT_EQ(loaded.tensors.size(), 5u);

    const LoadedTensor& loaded_weight = loaded.tensors.at("wte.weight");
    EXPECT_EQ(loaded_weight.shape, (std::vector<int64_t>{3, 4}));
    ASSERT_EQ(loaded_weight.data.size(), weight.size());
    for (size_t i = 0; i < weight.size(); ++i) {
        EXPECT_EQ(float_bits(loaded_weight.data[i]), float_bits(weight[i])) << "element " << i;
    }
    EXPECT_TRUE(loaded.tensors.at("scale").shape.empty());
    ASSERT_EQ(loaded.tensors.at("scale").data.size(), 1u);
    EXPECT_EQ(float_bits(loaded.tensors.at("scale").data[0]), float_bits(scalar));
    EXPECT_EQ(loaded.tensors.at("gain").shape, (std::vector<int64_t>{1}));
    ASSERT_EQ(loaded.tensors.at("gain").data.size(), 1u);
    EXPECT_EQ(float_bits(loaded.tensors.at("gain").data[0]), float_bits(single));
    EXPECT_EQ(loaded.tensors.at("empty").shape, (std::vector<int64_t>{0, 5}));
    EXPECT_TRUE(loaded.tensors.at("empty").data.empty());
    EXPECT_EQ(loaded.tensors.at("blocks.0.bias").data, bias);
}

TEST_F(Safetensors, WritesTheSpecLayout) {
    const std::vector<float> first = {1.0f, 2.0f, 3.0f};
    const std::vector<float> second = {-4.0f, 5.0f};
    const std::string path = path_of("layout.safetensors");
    write_safetensors(path, {{"zeta", {3}, first.data()}, {"alpha", {1, 2}, second.data()}}, {});

    const std::string bytes = read_bytes(path);
    ASSERT_GE(bytes.size(), 8u);
    uint64_t header_length = 0;
    for (int i = 0; i < 8; ++i)
        header_length |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    EXPECT_EQ(header_length % 8, 0u);
    ASSERT_EQ(bytes.size(), 8 + header_length + 5 * sizeof(float));

    const nlohmann::json header = nlohmann::json::parse(bytes.substr(8, header_length));
    EXPECT_FALSE(header.contains("__metadata__")) << "empty metadata must be omitted";
    EXPECT_EQ(header["zeta"]["dtype"], "F32");
    EXPECT_EQ(header["zeta"]["shape"], nlohmann::json::array({3}));
    EXPECT_EQ(header["zeta"]["data_offsets"], nlohmann::json::array({0, 12}));
    EXPECT_EQ(header["alpha"]["shape"], nlohmann::json::array({1, 2}));
    EXPECT_EQ(header["alpha"]["data_offsets"], nlohmann::json::array({12, 20}));
    EXPECT_EQ(bytes.substr(8 + header_length), raw_bytes(first) + raw_bytes(second));
    EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(Safetensors, ReadsHandBuiltFileAndConvertsF16Bf16F64) {
    // Data section: F64 first, then BF16, then F16, then F32, deliberately not in header order, and the
    // header is not padded so the data starts at an unaligned file offset.
    const std::vector<double> doubles = {1.5, -0.1, 1e300};
    const std::vector<uint16_t> bfloats = {0x3F80, 0xC0A0, 0x0000, 0xFF80};
    const std::vector<uint16_t> halves = {0x3C00, 0xC000, 0x0001, 0x7BFF, 0x7C00, 0x8000, 0x3555};
    const std::vector<float> floats = {6.0f, -7.5f};
    const std::string data = raw_bytes(doubles) + raw_bytes(bfloats) + raw_bytes(halves) + raw_bytes(floats);
    const std::string header = R"({"h":{"dtype":"F16","shape":[7],"data_offsets":[32,46]},)"
                               R"("__metadata__":{"format":"pt"},)"
                               R"("f":{"dtype":"F32","shape":[2,1],"data_offsets":[46,54]},)"
                               R"("b":{"dtype":"BF16","shape":[2,2],"data_offsets":[24,32]},)"
                               R"("d":{"dtype":"F64","shape":[3],"data_offsets":[0,24]},)"
                               R"("none":{"dtype":"F32","shape":[0],"data_offsets":[24,24]}})";
    ASSERT_NE(header.size() % 8, 0u);
    const std::string path = write_file("hand.safetensors", header, data);

    const SafetensorsFile loaded = read_safetensors(path);
    EXPECT_EQ(loaded.metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
    ASSERT_EQ(loaded.tensors.size(), 5u);

    const std::vector<float>& half = loaded.tensors.at("h").data;
    ASSERT_EQ(half.size(), 7u);
    EXPECT_EQ(half[0], 1.0f);
    EXPECT_EQ(half[1], -2.0f);
    EXPECT_EQ(half[2], std::ldexp(1.0f, -24));  // smallest F16 subnormal
    EXPECT_EQ(half[3], 65504.0f);               // largest finite F16
    EXPECT_EQ(half[4], std::numeric_limits<float>::infinity());
    EXPECT_EQ(float_bits(half[5]), float_bits(-0.0f));
    EXPECT_EQ(half[6], 0.333251953125f);  // F16 nearest to 1/3

    const LoadedTensor& bfloat = loaded.tensors.at("b");
    EXPECT_EQ(bfloat.shape, (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(bfloat.data, (std::vector<float>{1.0f, -5.0f, 0.0f, -std::numeric_limits<float>::infinity()}));

    const std::vector<float>& narrowed = loaded.tensors.at("d").data;
    ASSERT_EQ(narrowed.size(), 3u);
    EXPECT_EQ(narrowed[0], 1.5f);
    EXPECT_EQ(narrowed[1], -0.1f);
    EXPECT_EQ(narrowed[2], std::numeric_limits<float>::infinity());

    EXPECT_EQ(loaded.tensors.at("f").shape, (std::vector<int64_t>{2, 1}));
    EXPECT_EQ(loaded.tensors.at("f").data, floats);
    EXPECT_TRUE(loaded.tensors.at("none").data.empty());
}

TEST_F(Safetensors, ReadsAFileWithNoTensors) {
    const SafetensorsFile loaded = read_safetensors(write_file("empty.safetensors", "{}      ", ""));
    EXPECT_TRUE(loaded.tensors.empty());
    EXPECT_TRUE(loaded.metadata.empty());
}

TEST_F(Safetensors, ReplacesAnExistingFileAtomically) {
    const std::string path = path_of("replace.safetensors");
    const std::vector<float> old_values = {1.0f, 2.0f};
    const std::vector<float> new_values = {3.0f};
    write_safetensors(path, {{"old", {2}, old_values.data()}}, {{"version", "1"}});
    write_safetensors(path, {{"new", {1}, new_values.data()}}, {});

    const SafetensorsFile loaded = read_safetensors(path);
    EXPECT_TRUE(loaded.metadata.empty());
    ASSERT_EQ(loaded.tensors.size(), 1u);
    EXPECT_EQ(loaded.tensors.at("new").data, new_values);
    EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(Safetensors, WriteRejectsBadTensors) {
    const std::vector<float> values = {1.0f, 2.0f};
    const std::string path = path_of("bad.safetensors");
    EXPECT_TRUE(throws_input_error(
        [&] {
            write_safetensors(path, {{"w", {2}, values.data()}, {"w", {1}, values.data()}}, {});
        },
        {path, "'w'", "twice"}));
    EXPECT_TRUE(throws_input_error(
        [&] {
            write_safetensors(path, {{"__metadata__", {2}, values.data()}}, {});
        },
        {path, "__metadata__"}));
    EXPECT_TRUE(throws_input_error(
        [&] {
            write_safetensors(path, {{"w", {2, -1}, values.data()}}, {});
        },
        {"negative"}));
    EXPECT_TRUE(throws_input_error([&] { write_safetensors(path, {{"w", {2}, nullptr}}, {}); }, {"no data"}));
    EXPECT_TRUE(throws_input_error(
        [&] {
            write_safetensors(path, {{"w", {2}, values.data()}}, {{"k", "\xFF"}});
        },
        {"UTF-8"}));
    EXPECT_FALSE(fs::exists(path));
    EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(Safetensors, WriteFailsWhenTheDirectoryIsMissingOrNotADirectory) {
    const std::vector<float> values = {1.0f};
    const std::string in_missing = path_of("missing_dir/model.safetensors");
    EXPECT_TRUE(throws_input_error(
        [&] {
            write_safetensors(in_missing, {{"w", {1}, values.data()}}, {});
        },
        {in_missing, "does not exist"}));
    EXPECT_FALSE(fs::exists(path_of("missing_dir")));

    const std::string file_as_directory = write_bytes("plain_file", "x");
    const std::string under_file = file_as_directory + "/model.safetensors";
    EXPECT_TRUE(throws_input_error(
        [&] {
            write_safetensors(under_file, {{"w", {1}, values.data()}}, {});
        },
        {under_file, "not a directory"}));
}

TEST_F(Safetensors, WriteFailsWhenTheTargetIsADirectoryAndLeavesNoTemporary) {
    const std::vector<float> values = {1.0f};
    const std::string target = path_of("occupied");
    fs::create_directory(target);
    fs::create_directory(target + "/child");
    EXPECT_TRUE(throws_input_error(
        [&] {
            write_safetensors(target, {{"w", {1}, values.data()}}, {});
        },
        {target, "renaming"}));
    EXPECT_FALSE(fs::exists(target + ".tmp"));
}

TEST_F(Safetensors, WriteFailsInAnUnwritableDirectory) {
    const fs::path locked = m_folder.dir / "locked";
    fs::create_directory(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    if (std::ofstream(locked / "probe")) {
        GTEST_SKIP() << "this user can write into read-only directories (running as root?)";
    }
    const std::vector<float> values = {1.0f};
    const std::string path = (locked / "model.safetensors").string();
    EXPECT_TRUE(throws_input_error(
        [&] {
            write_safetensors(path, {{"w", {1}, values.data()}}, {});
        },
        {path, "writable"}));
}

TEST_F(Safetensors, MissingFileNamesThePath) {
    const std::string path = path_of("nowhere.safetensors");
    EXPECT_TRUE(throws_input_error([&] { read_safetensors(path); }, {path, "does not exist"}));
    EXPECT_TRUE(throws_input_error([&] { read_safetensors(m_folder.dir.string()); }, {"not a regular file"}));
}

TEST_F(Safetensors, TruncatedFilesSayTruncated) {
    const std::string bytes = read_bytes(write_valid("valid.safetensors"));
    // Cut inside the data, at the data start, inside the header, and inside the length prefix.
    for (const size_t cut : {size_t{1}, size_t{4}, size_t{8}, bytes.size() - 20, bytes.size() - 3}) {
        const std::string path = write_bytes("cut.safetensors", bytes.substr(0, bytes.size() - cut));
        EXPECT_TRUE(throws_input_error([&] { read_safetensors(path); }, {path, "truncated"}))
            << "cut " << cut;
    }
    const std::string data_cut = write_bytes("data_cut.safetensors", bytes.substr(0, bytes.size() - 1));
    EXPECT_TRUE(throws_input_error([&] { read_safetensors(data_cut); }, {"'bias'", "data section has"}));
    const std::string empty = write_bytes("zero.safetensors", "");
    EXPECT_TRUE(throws_input_error([&] { read_safetensors(empty); }, {"truncated", "0 bytes"}));
}

TEST_F(Safetensors, RejectsAbsurdHeaderLength) {
    for (const uint64_t length : {uint64_t{100'000'001}, uint64_t{1} << 40, ~uint64_t{0}}) {
        const std::string path = write_bytes("absurd.safetensors", little_endian_u64(length) + "{}");
        EXPECT_TRUE(throws_input_error([&] { read_safetensors(path); }, {path, "100 MB"})) << length;
    }
}

TEST_F(Safetensors, RejectsHeaderThatIsNotAJsonObject) {
    const std::string not_json = write_file("not_json.safetensors", "{\"a\": ", "");
    EXPECT_TRUE(throws_input_error([&] { read_safetensors(not_json); }, {not_json, "not valid JSON"}));
    const std::string array = write_file("array.safetensors", "[1, 2]", "");
    EXPECT_TRUE(throws_input_error([&] { read_safetensors(array); }, {array, "not a JSON object"}));
    const std::string deep =
        write_file("deep.safetensors", std::string(200000, '[') + std::string(200000, ']'), "");
    EXPECT_TRUE(throws_input_error([&] { read_safetensors(deep); }, {deep, "nested deeper than 64"}));
}

TEST_F(Safetensors, RejectsMalformedTensorEntries) {
    const std::string data(16, '\0');
    struct Case {
        std::string entry;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {R"("x")", "expected an object"},
        {R"({"shape":[4],"data_offsets":[0,16]})", "'dtype' is missing"},
        {R"({"dtype":"F32","data_offsets":[0,16]})", "'shape' is missing"},
        {R"({"dtype":"F32","shape":[4]})", "'data_offsets' is missing"},
        {R"({"dtype":32,"shape":[4],"data_offsets":[0,16]})", "'dtype' must be a string"},
        {R"({"dtype":"F32","shape":4,"data_offsets":[0,16]})", "'shape' must be an array"},
        {R"({"dtype":"F32","shape":["4"],"data_offsets":[0,16]})", "shape[0] must be an integer"},
        {R"({"dtype":"F32","shape":[4.0],"data_offsets":[0,16]})", "shape[0] must be an integer"},
        {R"({"dtype":"F32","shape":[2,-2],"data_offsets":[0,16]})", "shape[1] is negative"},
        {R"({"dtype":"F32","shape":[4],"data_offsets":"0..16"})", "'data_offsets' must be an array"},
        {R"({"dtype":"F32","shape":[4],"data_offsets":[0,8,16]})", "'data_offsets' must be an array"},
        {R"({"dtype":"F32","shape":[4],"data_offsets":[-4,12]})", "data_offsets[0] is negative"},
        {R"({"dtype":"F32","shape":[4],"data_offsets":[0,null]})", "data_offsets[1] must be an integer"},
        {R"({"dtype":"F32","shape":[0],"data_offsets":[16,8]})", "end < begin"},
        {R"({"dtype":"F32","shape":[3],"data_offsets":[0,16]})", "does not fit its data_offsets"},
        {R"({"dtype":"F16","shape":[4],"data_offsets":[0,16]})", "does not fit its data_offsets"},
        {R"({"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,16]})", "does not fit"},
        {R"({"dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,16]})", "too large"},
    };
    for (const Case& test_case : cases) {
        const std::string path =
            write_file("entry.safetensors", R"({"wte.weight":)" + test_case.entry + "}", data);
        EXPECT_TRUE(
            throws_input_error([&] { read_safetensors(path); }, {path, "'wte.weight'", test_case.expected}))
            << test_case.entry;
    }
}

TEST_F(Safetensors, RejectsUnsupportedDtypeByName) {
    for (const std::string dtype : {"I64", "U8", "BOOL", "F8_E4M3", "f32"}) {
        const std::string path = write_file(
            "dtype.safetensors", R"({"ids":{"dtype":")" + dtype + R"(","shape":[2],"data_offsets":[0,16]}})",
            std::string(16, '\0'));
        EXPECT_TRUE(
            throws_input_error([&] { read_safetensors(path); }, {path, "'ids'", "'" + dtype + "'", "F32"}));
    }
}

TEST_F(Safetensors, RejectsOffsetsBeyondTheDataSection) {
    const std::string path = write_file(
        "beyond.safetensors", R"({"wte.weight":{"dtype":"F32","shape":[1024],"data_offsets":[0,4096]}})",
        std::string(1000, '\0'));
    EXPECT_TRUE(throws_input_error(
        [&] { read_safetensors(path); },
        {"checkpoint '" + path +
         "' is truncated: tensor 'wte.weight' needs bytes 0..4096 but the data section has "
         "1000 bytes"}));
}

TEST_F(Safetensors, RejectsOverlappingTensors) {
    const std::string path = write_file("overlap.safetensors",
                                        R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
                                        R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                                        std::string(16, '\0'));
    EXPECT_TRUE(throws_input_error([&] { read_safetensors(path); }, {path, "'a'", "'b'", "overlap"}));

    const std::string touching = write_file("touching.safetensors",
                                            R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                                            R"("e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})",
                                            std::string(16, '\0'));
    EXPECT_EQ(read_safetensors(touching).tensors.size(), 3u);
}

TEST_F(Safetensors, RejectsNonStringMetadata) {
    const std::string number = write_file("meta_number.safetensors", R"({"__metadata__":{"step":10}})", "");
    EXPECT_TRUE(throws_input_error([&] { read_safetensors(number); }, {number, "'step'", "not a string"}));
    const std::string nested =
        write_file("meta_nested.safetensors", R"({"__metadata__":{"cfg":{"a":"b"}}})", "");
    EXPECT_TRUE(throws_input_error([&] { read_safetensors(nested); }, {"'cfg'", "not a string"}));
    const std::string not_object = write_file("meta_array.safetensors", R"({"__metadata__":["a"]})", "");
    EXPECT_TRUE(throws_input_error([&] { read_safetensors(not_object); }, {"__metadata__", "array"}));
}

TEST_F(Safetensors, RandomGarbageIsAnInputError) {
    Rng rng(20240601);
    for (int trial = 0; trial < 50; ++trial) {
        std::string bytes(static_cast<size_t>(rng.below(300)), '\0');
        for (char& byte : bytes) byte = static_cast<char>(rng.below(256));
        if (trial % 2 == 1 && bytes.size() >= 8) {
            // A plausible length prefix so the garbage reaches the JSON parser.
            const std::string length =
                little_endian_u64(bytes.size() - 8 - rng.below(static_cast<int>(bytes.size() - 7)));
            bytes.replace(0, 8, length);
        }
        const std::string path = write_bytes("garbage.safetensors", bytes);
        EXPECT_TRUE(throws_input_error([&] { read_safetensors(path); }, {path})) << "trial " << trial;
    }
}

TEST_F(Safetensors, CorruptedValidFilesLoadOrThrowInputError) {
    const std::string bytes = read_bytes(write_valid("valid.safetensors"));
    Rng rng(7);
    for (int trial = 0; trial < 300; ++trial) {
        std::string corrupted = bytes;
        const int flips = 1 + rng.below(3);
        for (int flip = 0; flip < flips; ++flip) {
            corrupted[static_cast<size_t>(rng.below(static_cast<int>(corrupted.size())))] =
                static_cast<char>(rng.below(256));
        }
        const std::string path = write_bytes("corrupt.safetensors", corrupted);
        try {
            read_safetensors(path);
        } catch (const InputError& error) {
            EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << error.what();
        } catch (const std::exception& error) {
            ADD_FAILURE() << "trial " << trial << " threw a non-InputError: " << error.what();
        }
    }
}

}  // namespace
}  // namespace normlab
