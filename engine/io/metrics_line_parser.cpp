// MetricsLineParser: simdjson's DOM parser over one line at a time (a bad line costs only itself),
// walking record_fields' tables so the names read are exactly the names written.
#include "engine/io/metrics_line_parser.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <new>
#include <optional>
#include <string>

#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/io/record_fields.h"

namespace normlab {

using namespace record_fields;
using simdjson::dom::element;
using simdjson::dom::object;

struct MetricsLineParser::Impl {
    // Lines nested deeper than any JSON NormLab reads are refused like every other reader's.
    Impl() {
        if (parser.allocate(simdjson::dom::MINIMAL_DOCUMENT_CAPACITY, kMaxJsonDepth) != simdjson::SUCCESS)
            throw std::bad_alloc();
    }
    simdjson::dom::parser parser;
};

namespace {
// A number written by to_json: null is a non-finite value (NaN); a missing key (a writer that does
// not record it) reads as `missing`: kNotRecorded for telemetry and the measured step scalars
// (grad_norm, steps_per_s: the bridge logs them on its logged steps only), 0 for loss and lr.
double read_number(object parent, const char* key, double missing = 0.0) {
    element value;
    if (parent.at_key(key).get(value) != simdjson::SUCCESS) return missing;
    if (value.is_null()) return std::nan("");
    double number = 0.0;
    if (value.get_double().get(number) != simdjson::SUCCESS)
        throw InputError(std::string("\"") + key + "\" is not a number");
    return number;
}

std::optional<double> read_optional(object parent, const char* key) {
    element value;
    if (parent.at_key(key).get(value) != simdjson::SUCCESS) return std::nullopt;
    return read_number(parent, key);
}

// A sub-object such as "grad"; nothing when the writer left it out (its fields are then not recorded).
std::optional<object> child_object(object parent, const char* key) {
    object child;
    if (parent.at_key(key).get_object().get(child) != simdjson::SUCCESS) return std::nullopt;
    return child;
}

double read_child_number(const std::optional<object>& parent, const char* key) {
    return parent ? read_number(*parent, key, kNotRecorded) : kNotRecorded;
}

// Each block's "attn_head_max_logit" list appended to `out` ([block][head]); nothing unless every
// block lists the same number of heads (a ragged table cannot be indexed [block][head]).
void read_head_max_logits(element layers, std::vector<double>& out) {
    simdjson::dom::array list;
    if (layers.get_array().get(list) != simdjson::SUCCESS) return;
    size_t heads_per_block = 0;
    for (element item : list) {
        simdjson::dom::array heads;
        if (item.at_key("attn_head_max_logit").get_array().get(heads) != simdjson::SUCCESS ||
            heads.size() == 0 || (heads_per_block != 0 && heads.size() != heads_per_block)) {
            out.clear();
            return;
        }
        heads_per_block = heads.size();
        for (element value : heads) {
            double number = 0.0;
            out.push_back(value.is_null() || value.get_double().get(number) != simdjson::SUCCESS
                              ? std::nan("")
                              : number);
        }
    }
}

std::vector<LayerTelemetry> read_layers(element layers) {
    simdjson::dom::array list;
    if (layers.get_array().get(list) != simdjson::SUCCESS) throw InputError("\"layers\" is not a list");
    std::vector<LayerTelemetry> out;
    out.reserve(list.size());
    for (element item : list) {
        object entry;
        if (item.get_object().get(entry) != simdjson::SUCCESS)
            throw InputError("a block of \"layers\" is not an object");
        LayerTelemetry layer;
        layer.has_cross = entry.at_key("resid_cross").error() == simdjson::SUCCESS;
        for (const LayerField& field : kLayerFields)
            layer.*field.member = read_number(entry, field.name, kNotRecorded);
        const std::optional<object> grad = child_object(entry, "grad");
        for (const GradField& field : kGradFields)
            layer.grad.*field.member = read_child_number(grad, field.name);
        for (const SublayerGroup& group : kSublayerGroups) {
            const std::optional<object> values = child_object(entry, group.name);
            for (const SublayerField& field : group.fields)
                layer.*field.member = read_child_number(values, field.name);
        }
        out.push_back(layer);
    }
    return out;
}
}  // namespace

MetricsLineParser::MetricsLineParser() : m_impl(std::make_unique<Impl>()) {}
MetricsLineParser::~MetricsLineParser() = default;
MetricsLineParser::MetricsLineParser(MetricsLineParser&&) noexcept = default;
MetricsLineParser& MetricsLineParser::operator=(MetricsLineParser&&) noexcept = default;

StepRecord MetricsLineParser::parse(std::string_view line) {
    element document;
    if (m_impl->parser.parse(line.data(), line.size()).get(document) != simdjson::SUCCESS)
        throw InputError("not JSON");
    object root;
    if (document.get_object().get(root) != simdjson::SUCCESS)
        throw InputError("a metrics line is not a JSON object");
    StepRecord record;
    if (root.at_key("step").get_int64().get(record.step) != simdjson::SUCCESS)
        throw InputError("a metrics line has no whole-number \"step\"");
    record.loss = read_number(root, "loss");
    record.lr = read_number(root, "lr");
    record.grad_norm = read_number(root, "grad_norm", kNotRecorded);
    record.accuracy = read_optional(root, "accuracy");
    record.val_loss = read_optional(root, "val_loss");
    record.val_accuracy = read_optional(root, "val_accuracy");
    record.val_loss_batch_stats = read_optional(root, "val_loss_batch_stats");
    record.steps_per_s = read_number(root, "steps_per_s", kNotRecorded);
    // A logged step's run-level fields: any of them makes the step's telemetry (the bridge writes the
    // output logits without a z-loss); one a writer left out is not recorded, a gap, never a 0.
    const bool run_level =
        std::any_of(std::begin(kStepFields), std::end(kStepFields),
                    [&root](const StepField& f) { return root.at_key(f.name).error() == simdjson::SUCCESS; });
    if (run_level) {
        StepTelemetry telemetry;
        for (const StepField& field : kStepFields)
            telemetry.*field.member = read_number(root, field.name, kNotRecorded);
        record.telemetry = telemetry;
    }
    element layers;
    if (root.at_key("layers").get(layers) == simdjson::SUCCESS) {
        record.layers = read_layers(layers);
        read_head_max_logits(layers, record.attn_head_max_logit);
    }
    if (root.at_key("encoder_layers").get(layers) == simdjson::SUCCESS)
        record.encoder_layers = read_layers(layers);
    return record;
}

}  // namespace normlab
