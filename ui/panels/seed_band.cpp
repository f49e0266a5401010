// addSeedBand: the group's stored low and high series (appended at the same steps) as one PlotBand.
#include "ui/panels/seed_band.h"

#include <QObject>

namespace normlab::ui {

void addSeedBand(PlotContent& content, const RunHistory& group, bool validation) {
    const SeedBands& bands = *group.bands;
    const DecimatedSeries& low = validation ? bands.valLow : bands.lossLow;
    const DecimatedSeries& high = validation ? bands.valHigh : bands.lossHigh;
    if (low.empty()) return;
    PlotBand band;
    // Over the seeds that logged each step: fewer where a seed diverged (said, not hidden).
    const QString seeds = bands.seedsFewest > 0 && bands.seedsFewest < bands.seedsLogged
                              ? QStringLiteral("%1-%2").arg(bands.seedsFewest).arg(bands.seedsLogged)
                              : QString::number(bands.seedsLogged);
    band.name = QObject::tr("%1%2: %3 over %4 seeds")
                    .arg(group.name, validation ? QObject::tr(" validation") : QString(),
                         spreadName(bands.spread), seeds);
    // In the legend once for every group alike: the mean lines name the groups, the colour pairs them.
    band.legend = QObject::tr("shaded: %1 over %2 seeds").arg(spreadName(bands.spread), seeds);
    band.colour = validation ? group.colour.darker(140) : group.colour;
    band.lower = low.samples();
    band.upper = high.samples();
    content.bands.push_back(std::move(band));
}

}  // namespace normlab::ui
