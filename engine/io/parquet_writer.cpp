// ParquetWriter: "PAR1", then per row group one data page (v1) per column (a Thrift PageHeader and the
// values; an optional column's definition levels first, bit-packed), then the FileMetaData footer, its
// length and "PAR1" (parquet-format's parquet.thrift gives the field numbers used below).
#include "engine/io/parquet_writer.h"

#include <cstring>
#include <stdexcept>

#include "engine/io/thrift_compact.h"

namespace normlab {

namespace {
using thrift::append_varint;
using thrift::CompactWriter;
using thrift::Type;

// parquet.thrift enums
constexpr int32_t kInt32 = 1, kInt64 = 2, kDouble = 5, kByteArray = 6;  // Type
constexpr int32_t kRequired = 0, kOptional = 1;                         // FieldRepetitionType
constexpr int32_t kUtf8 = 0;                                            // ConvertedType
constexpr int32_t kPlain = 0, kRle = 3;                                 // Encoding
constexpr int32_t kUncompressed = 0, kDataPage = 0;

int32_t physical_type(ParquetType type) {
    switch (type) {
        case ParquetType::String:
            return kByteArray;
        case ParquetType::Int32:
            return kInt32;
        case ParquetType::Int64:
            return kInt64;
        case ParquetType::OptionalDouble:
            return kDouble;
    }
    return kDouble;
}

template <typename T>
void append_le(std::string& out, T value) {  // x86 and ARM Linux are little-endian, as Parquet is
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out.append(bytes, sizeof(T));
}

// Definition levels (bit width 1) as one bit-packed run of the RLE / bit-packing hybrid, with the
// 4-byte length prefix data pages v1 put before them.
std::string definition_levels(const std::vector<uint8_t>& defined) {
    const size_t groups = (defined.size() + 7) / 8;
    std::string run;
    append_varint(run, (static_cast<uint64_t>(groups) << 1) | 1);
    for (size_t g = 0; g < groups; ++g) {
        uint8_t byte = 0;
        for (size_t bit = 0; bit < 8 && g * 8 + bit < defined.size(); ++bit)
            byte |= static_cast<uint8_t>(defined[g * 8 + bit] << bit);
        run.push_back(static_cast<char>(byte));
    }
    std::string out;
    append_le<uint32_t>(out, static_cast<uint32_t>(run.size()));
    return out + run;
}
}  // namespace

ParquetWriter::ParquetWriter(std::ostream& out, std::vector<ParquetColumn> schema, size_t row_group_rows)
    : m_out(out), m_schema(std::move(schema)), m_rowGroupRows(row_group_rows), m_buffers(m_schema.size()) {
    m_out.write("PAR1", 4);
    m_offset = 4;
}

ParquetWriter::ColumnBuffer& ParquetWriter::next(ParquetType expected) {
    if (m_column >= m_schema.size() || m_schema[m_column].type != expected)
        throw std::logic_error("ParquetWriter: a value of the wrong type or one too many in a row");
    return m_buffers[m_column++];
}

void ParquetWriter::string(std::string_view value) {
    ColumnBuffer& column = next(ParquetType::String);
    append_le<uint32_t>(column.values, static_cast<uint32_t>(value.size()));
    column.values.append(value);
}

void ParquetWriter::int32(int32_t value) {
    append_le(next(ParquetType::Int32).values, value);
}

void ParquetWriter::int64(int64_t value) {
    append_le(next(ParquetType::Int64).values, value);
}

void ParquetWriter::optionalDouble(std::optional<double> value) {
    ColumnBuffer& column = next(ParquetType::OptionalDouble);
    column.defined.push_back(value ? 1 : 0);
    if (value) {
        append_le(column.values, *value);
    } else {
        ++column.nulls;
    }
}

void ParquetWriter::endRow() {
    if (m_column != m_schema.size()) throw std::logic_error("ParquetWriter: a row is missing values");
    m_column = 0;
    if (static_cast<size_t>(++m_rows) == m_rowGroupRows) flushRowGroup();
}

void ParquetWriter::flushRowGroup() {
    if (m_rows == 0) return;
    RowGroup group;
    group.rows = m_rows;
    for (size_t c = 0; c < m_schema.size(); ++c) {
        ColumnBuffer& column = m_buffers[c];
        const bool optional = m_schema[c].type == ParquetType::OptionalDouble;
        const std::string page =
            (optional ? definition_levels(column.defined) : std::string()) + column.values;
        CompactWriter header;
        header.beginStruct();
        header.fieldI32(1, kDataPage);
        header.fieldI32(2, static_cast<int32_t>(page.size()));
        header.fieldI32(3, static_cast<int32_t>(page.size()));
        header.fieldStruct(5);
        header.fieldI32(1, static_cast<int32_t>(m_rows));
        header.fieldI32(2, kPlain);
        header.fieldI32(3, kRle);
        header.fieldI32(4, kRle);
        header.endStruct();
        header.endStruct();
        m_out.write(header.bytes().data(), static_cast<std::streamsize>(header.bytes().size()));
        m_out.write(page.data(), static_cast<std::streamsize>(page.size()));
        const int64_t size = static_cast<int64_t>(header.bytes().size() + page.size());
        group.chunks.push_back({m_offset, size, m_rows});
        group.bytes += size;
        m_offset += size;
        column = ColumnBuffer{};
    }
    m_totalRows += m_rows;
    m_rows = 0;
    m_rowGroups.push_back(std::move(group));
}

void ParquetWriter::finish(const std::string& created_by) {
    if (m_column != 0) throw std::logic_error("ParquetWriter: finish() inside a row");
    flushRowGroup();
    CompactWriter footer;
    footer.beginStruct();
    footer.fieldI32(1, 1);  // version
    footer.fieldList(2, Type::Struct, m_schema.size() + 1);
    footer.listStruct();  // the root: a group of every column
    footer.fieldBinary(4, "schema");
    footer.fieldI32(5, static_cast<int32_t>(m_schema.size()));
    footer.endStruct();
    for (const ParquetColumn& column : m_schema) {
        footer.listStruct();
        footer.fieldI32(1, physical_type(column.type));
        footer.fieldI32(3, column.type == ParquetType::OptionalDouble ? kOptional : kRequired);
        footer.fieldBinary(4, column.name);
        if (column.type == ParquetType::String) footer.fieldI32(6, kUtf8);
        footer.endStruct();
    }
    footer.fieldI64(3, m_totalRows);
    footer.fieldList(4, Type::Struct, m_rowGroups.size());
    for (const RowGroup& group : m_rowGroups) {
        footer.listStruct();
        footer.fieldList(1, Type::Struct, group.chunks.size());
        for (size_t c = 0; c < group.chunks.size(); ++c) {
            const ChunkInfo& chunk = group.chunks[c];
            footer.listStruct();
            footer.fieldI64(2, chunk.offset);
            footer.fieldStruct(3);
            footer.fieldI32(1, physical_type(m_schema[c].type));
            footer.fieldList(2, Type::I32, 2);
            footer.listI32(kPlain);
            footer.listI32(kRle);
            footer.fieldList(3, Type::Binary, 1);
            footer.listBinary(m_schema[c].name);
            footer.fieldI32(4, kUncompressed);
            footer.fieldI64(5, chunk.values);
            footer.fieldI64(6, chunk.size);
            footer.fieldI64(7, chunk.size);
            footer.fieldI64(9, chunk.offset);
            footer.endStruct();
            footer.endStruct();
        }
        footer.fieldI64(2, group.bytes);
        footer.fieldI64(3, group.rows);
        footer.endStruct();
    }
    footer.fieldBinary(6, created_by);
    footer.endStruct();
    const std::string& bytes = footer.bytes();
    m_out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::string tail;
    append_le<uint32_t>(tail, static_cast<uint32_t>(bytes.size()));
    tail += "PAR1";
    m_out.write(tail.data(), static_cast<std::streamsize>(tail.size()));
}

}  // namespace normlab
