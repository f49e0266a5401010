// addSolidAndDashed: two runSeries of one run, styled apart.
#include "ui/panels/solid_and_dashed.h"

#include "ui/panels/run_captions.h"

namespace normlab::ui {

void addSolidAndDashed(PlotContent& content, const TelemetryStore& store, const RunHistory& run,
                       const NamedPoints& solid, const NamedPoints& dashed, bool dashedOnSecondary) {
    PlotSeries first = runSeries(store, run, solid.name, true, solid.points);
    first.width = 1.8;
    content.series.push_back(first);
    PlotSeries second = runSeries(store, run, dashed.name, false, dashed.points);
    second.colour = run.colour.lighter(130);
    second.width = 1.4;
    second.style = Qt::DashLine;
    second.onSecondaryAxis = dashedOnSecondary;
    content.series.push_back(second);
}

}  // namespace normlab::ui
