// Reads metrics.jsonl lines into StepRecords with simdjson (runtime-dispatched SIMD, several times
// faster than a DOM of std::maps on folders of hundreds of MB). Keeps one parser's buffers between
// lines, so one instance per reading thread. The inverse of to_json(StepRecord).
#pragma once
#include <memory>
#include <string_view>

#include "engine/train/telemetry.h"

namespace normlab {

class MetricsLineParser {
  public:
    MetricsLineParser();
    ~MetricsLineParser();
    MetricsLineParser(MetricsLineParser&&) noexcept;
    MetricsLineParser& operator=(MetricsLineParser&&) noexcept;

    // One line of metrics.jsonl (NormLab's own or another writer's): null reads as NaN, a missing
    // field as 0 (not measured). Throws InputError naming what is wrong with the line.
    StepRecord parse(std::string_view line);

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace normlab
