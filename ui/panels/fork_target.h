// Where a fork asked for at a chart's step would really start: the selected run's newest fork point
// at or before that step (or its state now), so the chart's menu names the step the fork will have
// and not the step the pointer was at. The window answers (it knows the runs and their kept states).
#pragma once
#include <QString>
#include <cstdint>
#include <functional>
#include <optional>

namespace normlab::ui {

struct ForkTarget {
    QString run;                  // the run that would be forked
    std::optional<int64_t> step;  // the step the fork starts at; empty: it cannot be forked there
    bool now = false;             // it is training there: the fork takes its state as it is now
    QString problem;              // why not (with no step)
};

using ForkTargetLookup = std::function<ForkTarget(int64_t step)>;

}  // namespace normlab::ui
