// walk_metrics_table: the run-level columns, then the per-block columns of records_json's field table;
// the CSV and Parquet writers are sinks of the same rows, so both files hold the same table.
#include "engine/io/metrics_table.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "engine/core/number_format.h"
#include "engine/core/version.h"
#include "engine/io/parquet_writer.h"
#include "engine/io/record_fields.h"
#include "engine/io/records_json.h"
#include "engine/io/run_folder_reader.h"

namespace normlab {

namespace {
const char* const kRunColumns[] = {"loss",     "lr",           "grad_norm",   "accuracy",
                                   "val_loss", "val_accuracy", "steps_per_s", "val_loss_batch_stats"};
}  // namespace

std::vector<std::string> run_level_columns() {
    std::vector<std::string> columns(std::begin(kRunColumns), std::end(kRunColumns));
    for (const record_fields::StepField& field : record_fields::kStepFields) columns.emplace_back(field.name);
    return columns;
}

// kRunColumns' order, then the output-logit fields (empty on steps without).
std::vector<std::optional<double>> run_level_values(const StepRecord& record) {
    auto if_recorded = [](double value) {
        return record_fields::recorded(value) ? std::optional<double>(value) : std::nullopt;
    };
    std::vector<std::optional<double>> values{
        record.loss,     record.lr,           if_recorded(record.grad_norm),   record.accuracy,
        record.val_loss, record.val_accuracy, if_recorded(record.steps_per_s), record.val_loss_batch_stats};
    for (const record_fields::StepField& field : record_fields::kStepFields) {
        const double value =
            record.telemetry ? (*record.telemetry).*field.member : record_fields::kNotRecorded;
        values.push_back(record_fields::recorded(value) ? std::optional<double>(value) : std::nullopt);
    }
    return values;
}

namespace {
class CsvSink : public MetricsTableSink {
  public:
    explicit CsvSink(std::ostream& out) : m_out(out) {
        m_out << "run,step,stack,block";
        for (const std::string& column : metrics_table_value_columns()) m_out << ',' << column;
        m_out << '\n';
    }
    void row(const std::string& run, int64_t step, const char* stack, int block,
             const std::vector<std::optional<double>>& values) override {
        m_out << run << ',' << step << ',' << stack << ',' << block;
        for (const std::optional<double>& value : values) write_csv_number(m_out, value);
        m_out << '\n';
    }

  private:
    std::ostream& m_out;
};

std::vector<ParquetColumn> parquet_schema() {
    std::vector<ParquetColumn> schema = {{"run", ParquetType::String},
                                         {"step", ParquetType::Int64},
                                         {"stack", ParquetType::String},
                                         {"block", ParquetType::Int32}};
    for (const std::string& column : metrics_table_value_columns())
        schema.push_back({column, ParquetType::OptionalDouble});
    return schema;
}

class ParquetSink : public MetricsTableSink {
  public:
    explicit ParquetSink(std::ostream& out) : m_writer(out, parquet_schema()) {}
    void row(const std::string& run, int64_t step, const char* stack, int block,
             const std::vector<std::optional<double>>& values) override {
        m_writer.string(run);
        m_writer.int64(step);
        m_writer.string(stack);
        m_writer.int32(block);
        for (const std::optional<double>& value : values) m_writer.optionalDouble(value);
        m_writer.endRow();
    }
    void finish() { m_writer.finish(version_line()); }

  private:
    ParquetWriter m_writer;
};
}  // namespace

std::vector<std::string> metrics_table_value_columns() {
    std::vector<std::string> columns = run_level_columns();
    for (const std::string& field : block_field_names(true)) columns.push_back(field);
    return columns;
}

int64_t walk_metrics_table(const std::vector<std::string>& run_folders, MetricsTableSink& sink,
                           const StepRange& steps) {
    const std::vector<std::string> block_fields = block_field_names(true);
    // Which columns only a decoder block of an encoder-decoder has (left empty for the others).
    const std::vector<std::string> plain_fields = block_field_names(false);
    std::vector<bool> cross_only;
    for (const std::string& field : block_fields)
        cross_only.push_back(std::find(plain_fields.begin(), plain_fields.end(), field) ==
                             plain_fields.end());
    const size_t run_count = std::size(kRunColumns) + std::size(record_fields::kStepFields);
    std::vector<std::optional<double>> cells(run_count + block_fields.size());
    int64_t rows = 0;
    for (const std::string& folder : run_folders) {
        RunFolderReader reader(folder);
        const std::string run = std::filesystem::path(folder).filename().string();
        for (RunFolderReader::Update update = reader.poll();; update = reader.poll()) {
            for (const StepRecord& record : update.records) {
                if (!steps.contains(record.step)) continue;
                std::fill(cells.begin(), cells.end(), std::nullopt);
                const std::vector<std::optional<double>> run_cells = run_level_values(record);
                std::copy(run_cells.begin(), run_cells.end(), cells.begin());
                sink.row(run, record.step, "run", -1, cells);
                ++rows;
                for (const auto* stack : {&record.layers, &record.encoder_layers}) {
                    const char* name = stack == &record.layers ? "decoder" : "encoder";
                    for (size_t b = 0; b < stack->size(); ++b) {
                        const LayerTelemetry& layer = (*stack)[b];
                        std::fill(cells.begin(), cells.end(), std::nullopt);
                        const std::vector<double> values = block_field_values(layer, true);
                        for (size_t i = 0; i < values.size(); ++i)
                            if ((layer.has_cross || !cross_only[i]) && record_fields::recorded(values[i]))
                                cells[run_count + i] = values[i];
                        sink.row(run, record.step, name, static_cast<int>(b), cells);
                        ++rows;
                    }
                }
            }
            if (!update.more) break;
        }
    }
    return rows;
}

int64_t write_metrics_csv(const std::vector<std::string>& run_folders, std::ostream& out,
                          const StepRange& steps) {
    CsvSink sink(out);
    return walk_metrics_table(run_folders, sink, steps);
}

int64_t write_metrics_parquet(const std::vector<std::string>& run_folders, std::ostream& out,
                              const StepRange& steps) {
    ParquetSink sink(out);
    const int64_t rows = walk_metrics_table(run_folders, sink, steps);
    sink.finish();
    return rows;
}

}  // namespace normlab
