// write_metrics_csv: the run-level columns, then the per-block columns of records_json's field table.
#include "engine/io/metrics_table.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "engine/core/number_format.h"
#include "engine/io/records_json.h"
#include "engine/io/run_folder_reader.h"

namespace normlab {

namespace {
const char* const kRunColumns[] = {"loss",     "lr",           "grad_norm",  "accuracy",
                                   "val_loss", "val_accuracy", "steps_per_s"};

// One step's run-level values, in kRunColumns' order.
std::vector<std::optional<double>> run_values(const StepRecord& record) {
    return {record.loss,     record.lr,           record.grad_norm,  record.accuracy,
            record.val_loss, record.val_accuracy, record.steps_per_s};
}
}  // namespace

int64_t write_metrics_csv(const std::vector<std::string>& run_folders, std::ostream& out,
                          const StepRange& steps) {
    const std::vector<std::string> block_fields = block_field_names(true);
    // Which columns only a decoder block of an encoder-decoder has (left empty for the others).
    const std::vector<std::string> plain_fields = block_field_names(false);
    std::vector<bool> cross_only;
    for (const std::string& field : block_fields)
        cross_only.push_back(std::find(plain_fields.begin(), plain_fields.end(), field) ==
                             plain_fields.end());
    out << "run,step,stack,block";
    for (const char* column : kRunColumns) out << ',' << column;
    for (const std::string& field : block_fields) out << ',' << field;
    out << '\n';
    const size_t run_count = std::size(kRunColumns);
    int64_t rows = 0;
    for (const std::string& folder : run_folders) {
        RunFolderReader reader(folder);
        const std::string run = std::filesystem::path(folder).filename().string();
        for (RunFolderReader::Update update = reader.poll();; update = reader.poll()) {
            for (const StepRecord& record : update.records) {
                if (!steps.contains(record.step)) continue;
                out << run << ',' << record.step << ",run,-1";
                for (const std::optional<double>& value : run_values(record)) write_csv_number(out, value);
                for (size_t i = 0; i < block_fields.size(); ++i) out << ',';
                out << '\n';
                ++rows;
                for (const auto* stack : {&record.layers, &record.encoder_layers}) {
                    const char* name = stack == &record.layers ? "decoder" : "encoder";
                    for (size_t b = 0; b < stack->size(); ++b) {
                        const LayerTelemetry& layer = (*stack)[b];
                        out << run << ',' << record.step << ',' << name << ',' << b;
                        for (size_t i = 0; i < run_count; ++i) out << ',';
                        const std::vector<double> values = block_field_values(layer, true);
                        for (size_t i = 0; i < values.size(); ++i)
                            write_csv_number(out, layer.has_cross || !cross_only[i] ? std::optional(values[i])
                                                                                    : std::nullopt);
                        out << '\n';
                        ++rows;
                    }
                }
            }
            if (!update.more) break;
        }
    }
    return rows;
}

}  // namespace normlab
