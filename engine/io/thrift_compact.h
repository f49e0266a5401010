// A writer of Apache Thrift's compact protocol, the encoding of Parquet's page headers and file footer
// (github.com/apache/thrift doc/specs/thrift-compact-protocol.md): structs of numbered fields, zigzag
// varints, length-prefixed binaries and lists. Only what parquet_writer needs; no reader.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace normlab::thrift {

// An unsigned LEB128 varint (also the run headers of Parquet's RLE / bit-packing hybrid).
void append_varint(std::string& out, uint64_t value);

enum class Type : uint8_t {
    True = 1,
    False = 2,
    Byte = 3,
    I16 = 4,
    I32 = 5,
    I64 = 6,
    Double = 7,
    Binary = 8,
    List = 9,
    Set = 10,
    Map = 11,
    Struct = 12
};

class CompactWriter {
  public:
    // Fields are written in increasing id order inside a struct; begin/end nest.
    void beginStruct();
    void endStruct();  // writes the stop field
    void fieldI32(int16_t id, int32_t value);
    void fieldI64(int16_t id, int64_t value);
    void fieldBinary(int16_t id, std::string_view value);
    void fieldBool(int16_t id, bool value);
    void fieldStruct(int16_t id);  // then the struct's fields, then endStruct()
    // A list field: its header; then `size` elements (i32 values, binaries, or structs each ended).
    void fieldList(int16_t id, Type element, size_t size);
    void listI32(int32_t value);
    void listBinary(std::string_view value);
    void listStruct();  // an element struct: its fields, then endStruct()

    const std::string& bytes() const { return m_out; }

  private:
    void fieldHeader(int16_t id, Type type);
    void varint(uint64_t value) { append_varint(m_out, value); }
    static uint64_t zigzag(int64_t value) {
        return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
    }

    std::string m_out;
    std::vector<int16_t> m_lastField{0};  // per open struct, the last field id written
};

}  // namespace normlab::thrift
