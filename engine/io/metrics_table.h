// Run folders' metrics as one tidy table for pandas, polars or R: one row per run, step and block, one
// column per field. Run-level fields (loss, lr, ...) sit on block -1; per-block fields on the block's
// rows (stack "decoder" or "encoder"), on the steps that logged them. Empty cells are fields a row
// does not have; non-finite values are written as nan / inf. Written as CSV or as Parquet.
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "engine/core/step_range.h"
#include "engine/train/telemetry.h"

namespace normlab {

// The value columns, after the key columns run, step, stack and block: run-level fields, then the
// per-block fields of engine/io/record_fields.h.
std::vector<std::string> metrics_table_value_columns();

// The run-level columns (loss, lr, ..., then the output-logit fields of record_fields.h) and one
// step's values for them, in that order (nothing where the step did not log the field).
std::vector<std::string> run_level_columns();
std::vector<std::optional<double>> run_level_values(const StepRecord& record);

// One row of the table, handed to a sink in order; `values` has a cell per value column.
class MetricsTableSink {
  public:
    virtual ~MetricsTableSink() = default;
    virtual void row(const std::string& run, int64_t step, const char* stack, int block,
                     const std::vector<std::optional<double>>& values) = 0;
};

// Reads each run folder to its end (RunFolderReader) and hands its rows to `sink`, keeping the steps in
// `steps`. Returns the number of rows; throws InputError for a folder that is not a run.
int64_t walk_metrics_table(const std::vector<std::string>& run_folders, MetricsTableSink& sink,
                           const StepRange& steps = {});

// The table as CSV with a header row; as Parquet (uncompressed, row groups of 64k rows, the value
// columns nullable doubles, run and stack strings, step int64, block int32).
int64_t write_metrics_csv(const std::vector<std::string>& run_folders, std::ostream& out,
                          const StepRange& steps = {});
int64_t write_metrics_parquet(const std::vector<std::string>& run_folders, std::ostream& out,
                              const StepRange& steps = {});

}  // namespace normlab
