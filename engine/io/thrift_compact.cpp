// Thrift compact protocol: a field header is (id delta << 4 | type) when the delta is 1..15, else the
// type byte and the id as a zigzag varint; integers are zigzag varints; a stop byte ends a struct.
#include "engine/io/thrift_compact.h"

namespace normlab::thrift {

void append_varint(std::string& out, uint64_t value) {
    while (value >= 0x80) {
        out.push_back(static_cast<char>((value & 0x7F) | 0x80));
        value >>= 7;
    }
    out.push_back(static_cast<char>(value));
}

void CompactWriter::fieldHeader(int16_t id, Type type) {
    const int delta = id - m_lastField.back();
    if (delta > 0 && delta <= 15) {
        m_out.push_back(static_cast<char>((delta << 4) | static_cast<int>(type)));
    } else {
        m_out.push_back(static_cast<char>(type));
        varint(zigzag(id));
    }
    m_lastField.back() = id;
}

void CompactWriter::beginStruct() {
    m_lastField.push_back(0);
}

void CompactWriter::endStruct() {
    m_out.push_back(0);
    m_lastField.pop_back();
}

void CompactWriter::fieldI32(int16_t id, int32_t value) {
    fieldHeader(id, Type::I32);
    varint(zigzag(value));
}

void CompactWriter::fieldI64(int16_t id, int64_t value) {
    fieldHeader(id, Type::I64);
    varint(zigzag(value));
}

void CompactWriter::fieldBinary(int16_t id, std::string_view value) {
    fieldHeader(id, Type::Binary);
    listBinary(value);
}

void CompactWriter::fieldBool(int16_t id, bool value) {
    fieldHeader(id, value ? Type::True : Type::False);
}

void CompactWriter::fieldStruct(int16_t id) {
    fieldHeader(id, Type::Struct);
    beginStruct();
}

void CompactWriter::fieldList(int16_t id, Type element, size_t size) {
    fieldHeader(id, Type::List);
    if (size < 15) {
        m_out.push_back(static_cast<char>((size << 4) | static_cast<int>(element)));
    } else {
        m_out.push_back(static_cast<char>(0xF0 | static_cast<int>(element)));
        varint(size);
    }
}

void CompactWriter::listI32(int32_t value) {
    varint(zigzag(value));
}

void CompactWriter::listBinary(std::string_view value) {
    varint(value.size());
    m_out.append(value);
}

void CompactWriter::listStruct() {
    beginStruct();
}

}  // namespace normlab::thrift
