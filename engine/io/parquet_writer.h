// A minimal Apache Parquet writer (Debian 12 packages no Arrow): a flat schema of required strings,
// 32- and 64-bit integers and optional doubles, PLAIN encoding, no compression, row groups of a fixed
// size streamed to the output so memory stays bounded. Read by pandas, polars, pyarrow, DuckDB and R.
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace normlab {

enum class ParquetType { String, Int32, Int64, OptionalDouble };

struct ParquetColumn {
    std::string name;
    ParquetType type;
};

class ParquetWriter {
  public:
    ParquetWriter(std::ostream& out, std::vector<ParquetColumn> schema, size_t row_group_rows = 65536);
    // One row: a value for every column, in schema order (the type each column declares).
    void string(std::string_view value);
    void int32(int32_t value);
    void int64(int64_t value);
    void optionalDouble(std::optional<double> value);
    void endRow();
    // Writes the last row group and the footer; the stream then holds a complete file.
    void finish(const std::string& created_by);

  private:
    struct ColumnBuffer {
        std::string values;            // PLAIN-encoded values written so far in this row group
        std::vector<uint8_t> defined;  // optional columns: 1 when the row has a value
        int64_t nulls = 0;
    };
    struct ChunkInfo {
        int64_t offset = 0, size = 0, values = 0;
    };
    ColumnBuffer& next(ParquetType expected);
    void flushRowGroup();

    std::ostream& m_out;
    std::vector<ParquetColumn> m_schema;
    size_t m_rowGroupRows;
    std::vector<ColumnBuffer> m_buffers;
    size_t m_column = 0;  // the column the next value belongs to
    int64_t m_rows = 0;   // rows in the current row group
    int64_t m_offset = 0;
    int64_t m_totalRows = 0;
    struct RowGroup {
        std::vector<ChunkInfo> chunks;
        int64_t rows = 0, bytes = 0;
    };
    std::vector<RowGroup> m_rowGroups;
};

}  // namespace normlab
