// The block-activation chart's series and, in theory mode, the lemma's levels.
#include "ui/panels/block_resid_panel.h"

#include <QLabel>
#include <algorithm>
#include <limits>

#include "ui/panels/run_captions.h"

namespace normlab::ui {

BlockResidPanel::BlockResidPanel(const TelemetryStore& store, QWidget* parent)
    : BlockProfilePanel(QStringLiteral("block_resid"), tr("Activation norm per block (resid)"), store,
                        parent) {
    header()->addStretch();
}

PlotContent BlockResidPanel::buildContent(int) const {
    PlotContent content;
    content.x.title = tr("block");
    content.y.title = tr("E||h||^2 / d");
    content.y.log = true;
    content.emptyText = tr("Appears after the first step");
    bool preBand = false, postLevel = false;
    int blocks = 0;
    for (const auto& [id, run] : store().runs()) {
        if (!run.visible) continue;
        addProfiles(content, run, [](const BlockValues& block) { return block.resid; });
        if (!run.config.model.theory_mode) continue;
        blocks = std::max(blocks, run.config.model.layers);
        preBand |= run.config.model.norm_placement == normlab::NormPlacement::Pre;
        postLevel |= run.config.model.norm_placement == normlab::NormPlacement::Post;
    }
    if (preBand) {
        // Lemma 2 (Pre-LN): (1 + l/2) <= E||x_l||^2/d <= (1 + 3l/2) for block l = b + 1.
        PlotBand band{tr("Lemma 2 bounds (Pre-LN)"), {}, {}, QColor(120, 120, 120)};
        for (int b = 0; b < blocks; ++b) {
            const double l = b + 1;
            band.lower.append({static_cast<double>(b), 1.0 + l / 2.0});
            band.upper.append({static_cast<double>(b), 1.0 + 3.0 * l / 2.0});
        }
        content.bands.push_back(band);
    }
    if (postLevel) {
        content.series.push_back({tr("Lemma 2 (Post-LN): 1.5"),
                                  QColor(90, 90, 90),
                                  {QPointF(0, 1.5), QPointF(std::max(blocks - 1, 1), 1.5)},
                                  1.2,
                                  Qt::DashDotLine});
    }
    return content;
}

}  // namespace normlab::ui
