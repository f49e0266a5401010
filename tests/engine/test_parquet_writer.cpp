// The Parquet writer's building blocks against bytes worked out by hand from the Thrift compact
// protocol and Parquet specs, and a file's frame (magic, footer length). pyarrow reads whole files
// back in python/tests/test_parquet.py.
#include <gtest/gtest.h>

#include <sstream>

#include "engine/io/parquet_writer.h"
#include "engine/io/thrift_compact.h"

namespace normlab {
namespace {

std::string hex(const std::string& bytes) {
    std::ostringstream out;
    for (unsigned char byte : bytes)
        out << std::hex << (byte < 16 ? "0" : "") << static_cast<int>(byte) << ' ';
    return out.str();
}

TEST(ThriftCompact, EncodesFieldsAsTheSpecSays) {
    thrift::CompactWriter writer;
    writer.beginStruct();
    writer.fieldI32(1, 3);        // delta 1, type i32 (5): 0x15; zigzag(3) = 6
    writer.fieldI64(3, -1);       // delta 2, type i64 (6): 0x26; zigzag(-1) = 1
    writer.fieldBinary(4, "ab");  // delta 1, binary (8): 0x18; length 2, "ab"
    writer.fieldI32(20, 300);     // delta 16 > 15: type byte 0x05, zigzag(20) = 40 = 0x28; zigzag(300) = 600
    writer.fieldList(21, thrift::Type::I32, 2);  // delta 1, list (9): 0x19; size 2, i32: 0x25
    writer.listI32(0);
    writer.listI32(-2);         // zigzag(-2) = 3
    writer.fieldStruct(22);     // delta 1, struct (12): 0x1c
    writer.fieldBool(1, true);  // inner struct: delta 1, true (1): 0x11
    writer.endStruct();         // 0x00
    writer.endStruct();         // 0x00
    EXPECT_EQ(hex(writer.bytes()), "15 06 26 01 18 02 61 62 05 28 d8 04 19 25 00 03 1c 11 00 00 ");
}

TEST(ThriftCompact, LongListsCarryTheirSizeAfterTheHeader) {
    thrift::CompactWriter writer;
    writer.beginStruct();
    writer.fieldList(1, thrift::Type::Binary, 20);  // 0x19, then 0xf8 (size 15+ marker | binary), varint 20
    EXPECT_EQ(hex(writer.bytes()), "19 f8 14 ");
}

TEST(ParquetWriter, FramesTheFileAndRefusesRowsOfTheWrongShape) {
    std::ostringstream out;
    ParquetWriter writer(out, {{"run", ParquetType::String}, {"x", ParquetType::OptionalDouble}}, 2);
    for (int row = 0; row < 3; ++row) {
        writer.string("a");
        writer.optionalDouble(row == 1 ? std::nullopt : std::optional<double>(row));
        writer.endRow();
    }
    EXPECT_THROW(writer.int64(1), std::logic_error);  // the schema's first column is a string
    writer.string("b");
    EXPECT_THROW(writer.endRow(), std::logic_error);  // x is missing
    writer.optionalDouble(4.0);
    writer.endRow();
    writer.finish("test");
    const std::string file = out.str();
    ASSERT_GT(file.size(), 12u);
    EXPECT_EQ(file.substr(0, 4), "PAR1");
    EXPECT_EQ(file.substr(file.size() - 4), "PAR1");
    uint32_t footer = 0;
    for (int i = 0; i < 4; ++i)
        footer |= static_cast<uint32_t>(static_cast<unsigned char>(file[file.size() - 8 + i])) << (8 * i);
    ASSERT_LT(footer, file.size() - 12);
    const std::string metadata = file.substr(file.size() - 8 - footer, footer);
    EXPECT_NE(metadata.find("test"), std::string::npos);  // created_by
    EXPECT_NE(metadata.find("run"), std::string::npos);
    // Row group 1 holds rows 0-1 of x: definition levels 1,0 bit-packed (0b01) after the run header
    // (1 group << 1 | 1 = 3) and their 4-byte length 2, then the one defined value 0.0.
    EXPECT_NE(file.find(std::string("\x02\x00\x00\x00\x03\x01", 6) + std::string(8, '\0')),
              std::string::npos);
}

}  // namespace
}  // namespace normlab
