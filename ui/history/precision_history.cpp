// Folding a step's precision fields into PrecisionHistory: the per-block series are made on the first
// step that recorded them, so fp32 runs hold no buckets.
#include "ui/history/precision_history.h"

namespace normlab::ui {

namespace {
// Each quantity's LayerTelemetry field, in PrecisionQuantity's order.
constexpr std::array<double normlab::LayerTelemetry::*, kPrecisionQuantities> kFields = {
    &normlab::LayerTelemetry::grad_underflow, &normlab::LayerTelemetry::act_underflow,
    &normlab::LayerTelemetry::grad_overflow, &normlab::LayerTelemetry::act_overflow,
    &normlab::LayerTelemetry::stream_headroom};
}  // namespace

void PrecisionHistory::absorb(double x, const normlab::StepRecord& record, int capacity) {
    if (record.telemetry && normlab::recorded(record.telemetry->loss_scale))
        m_lossScale.append(x, record.telemetry->loss_scale);
    if (record.layers.empty() || !normlab::recorded(record.layers.front().act_overflow)) return;
    const size_t blocks = record.layers.size();
    for (size_t q = 0; q < kPrecisionQuantities; ++q) {
        std::vector<DecimatedSeries>& series = m_perBlock[q];
        if (series.size() != blocks) series.assign(blocks, DecimatedSeries(capacity));
        for (size_t b = 0; b < blocks; ++b) series[b].append(x, record.layers[b].*kFields[q]);
    }
}

void PrecisionHistory::clear() {
    for (std::vector<DecimatedSeries>& series : m_perBlock) series.clear();
    m_lossScale.clear();
}

}  // namespace normlab::ui
