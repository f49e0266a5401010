// Run folders' metrics as one tidy table for pandas, polars or R: one row per run, step and block, one
// column per field. Run-level fields (loss, lr, ...) sit on block -1; per-block fields on the block's
// rows (stack "decoder" or "encoder"), on the steps that logged them. Empty cells are fields a row
// does not have; non-finite values are written as nan / inf.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "engine/core/step_range.h"

namespace normlab {

// Reads each run folder to its end (RunFolderReader) and writes the table as CSV with a header row,
// keeping the steps in `steps`. Returns the number of data rows; throws InputError for a folder that
// is not a run.
int64_t write_metrics_csv(const std::vector<std::string>& run_folders, std::ostream& out,
                          const StepRange& steps = {});

}  // namespace normlab
