// Which telemetry fields feed each norm family, and their absorption: a family starts once a step
// measures one of its norms (so runs without Peri-LN, cross-attention or an encoder hold no series for
// them), and an unrecorded value or a 0 (older runs: no such norm) is a gap.
#include "ui/history/norm_scale_history.h"

#include <QCoreApplication>
#include <algorithm>
#include <cmath>

namespace normlab::ui {

namespace {
using normlab::LayerTelemetry;
using normlab::StepTelemetry;

// Where a family's values live in a record.
struct FamilyFields {
    std::vector<LayerTelemetry> normlab::StepRecord::*layers;
    double LayerTelemetry::*first;
    double LayerTelemetry::*second;
    double StepTelemetry::*final;  // nullptr: no final norm in this family
};

FamilyFields fieldsOf(NormFamily family) {
    using normlab::StepRecord;
    switch (family) {
        case NormFamily::Inputs:
            return {&StepRecord::layers, &LayerTelemetry::norm1_scale_mean, &LayerTelemetry::norm2_scale_mean,
                    &StepTelemetry::final_norm_scale_mean};
        case NormFamily::PeriOutputs:
            return {&StepRecord::layers, &LayerTelemetry::norm1_out_scale_mean,
                    &LayerTelemetry::norm2_out_scale_mean, nullptr};
        case NormFamily::CrossAttention:
            return {&StepRecord::layers, &LayerTelemetry::norm_cross_scale_mean,
                    &LayerTelemetry::norm_cross_out_scale_mean, nullptr};
        case NormFamily::Encoder:
            return {&StepRecord::encoder_layers, &LayerTelemetry::norm1_scale_mean,
                    &LayerTelemetry::norm2_scale_mean, &StepTelemetry::encoder_final_norm_scale_mean};
        case NormFamily::BatchStatisticsGap:
            return {&StepRecord::layers, &LayerTelemetry::norm1_stat_gap, &LayerTelemetry::norm2_stat_gap,
                    nullptr};
    }
    return {};
}

// 0 where a norm does not exist (a sub-layer without one) is a gap in its series.
double positiveOrNan(double value) {
    return value > 0.0 ? value : std::nan("");
}

bool measuresAny(const std::vector<LayerTelemetry>& layers, const FamilyFields& fields, double final) {
    return final > 0.0 || std::any_of(layers.begin(), layers.end(), [&](const LayerTelemetry& layer) {
               return layer.*fields.first > 0.0 || layer.*fields.second > 0.0;
           });
}
}  // namespace

NormFamilyNames normFamilyNames(NormFamily family) {
    auto tr = [](const char* text) { return QCoreApplication::translate("NormFamily", text); };
    switch (family) {
        case NormFamily::Inputs:
            return {tr("Sub-layer inputs"), tr(" attention"), tr(" FFN"), tr("final norm")};
        case NormFamily::PeriOutputs:
            return {tr("Peri-LN outputs"), tr(" attention out"), tr(" FFN out"), QString()};
        case NormFamily::CrossAttention:
            return {tr("Cross-attention"), tr(" cross"), tr(" cross out"), QString()};
        case NormFamily::Encoder:
            return {tr("Encoder"), tr(" attention"), tr(" FFN"), tr("encoder final norm")};
        case NormFamily::BatchStatisticsGap:
            return {tr("BatchNorm: batch vs running statistics"), tr(" attention"), tr(" FFN"), QString()};
    }
    return {};
}

void NormScaleHistory::absorb(double x, const normlab::StepRecord& record, int capacity) {
    for (NormFamily family : kNormFamilies) {
        const FamilyFields fields = fieldsOf(family);
        const std::vector<LayerTelemetry>& layers = record.*fields.layers;
        if (layers.empty()) continue;  // a step without per-block telemetry, or no encoder
        const double final = fields.final && record.telemetry ? (*record.telemetry).*fields.final : 0.0;
        NormScaleSeries& series = m_families[static_cast<size_t>(family)];
        if (series.empty() && !measuresAny(layers, fields, final)) continue;
        if (series.first.size() != layers.size()) {
            series.first.assign(layers.size(), DecimatedSeries(capacity));
            series.second.assign(layers.size(), DecimatedSeries(capacity));
        }
        for (size_t b = 0; b < layers.size(); ++b) {
            series.first[b].append(x, positiveOrNan(layers[b].*fields.first));
            series.second[b].append(x, positiveOrNan(layers[b].*fields.second));
        }
        if (fields.final) series.final.append(x, positiveOrNan(final));
    }
}

void NormScaleHistory::clear() {
    for (NormScaleSeries& series : m_families) {
        series.first.clear();
        series.second.clear();
        series.final.clear();
    }
}

}  // namespace normlab::ui
