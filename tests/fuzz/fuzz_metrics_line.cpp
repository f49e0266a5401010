// Feeds each line of the input to one MetricsLineParser (metrics.jsonl, any writer). Beyond no crash:
// only InputError escapes, per-head logits form a [block][head] table, and a line read is written by
// to_json and read again to the same JSON (reader and writer agree on every field a foreign line gives).
#include "engine/core/errors.h"
#include "engine/io/metrics_line_parser.h"
#include "engine/io/records_json.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

void check_round_trip(normlab::MetricsLineParser& parser, const normlab::StepRecord& record) {
    const std::string written = normlab::to_json(record).dump();
    normlab::StepRecord again;
    try {
        again = parser.parse(written);
    } catch (const normlab::InputError& error) {
        FUZZ_CHECK(false, "the writer's own line is refused (" + std::string(error.what()) + "): " + written);
    }
    FUZZ_CHECK(normlab::to_json(again).dump() == written, "metrics line round trip changed it: " + written);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view input = normlab::fuzz::as_text(data, size);
    normlab::MetricsLineParser parser;
    while (!input.empty()) {
        const size_t newline = std::min(input.find('\n'), input.size());
        const std::string line(input.substr(0, newline));
        input.remove_prefix(std::min(newline + 1, input.size()));
        normlab::StepRecord record;
        try {
            record = parser.parse(line);
        } catch (const normlab::InputError&) {
            continue;
        }
        const size_t blocks = record.layers.size();
        FUZZ_CHECK(record.attn_head_max_logit.empty() ||
                       (blocks > 0 && record.attn_head_max_logit.size() % blocks == 0),
                   "per-head logits that are not a [block][head] table");
        check_round_trip(parser, record);
    }
    return 0;
}
