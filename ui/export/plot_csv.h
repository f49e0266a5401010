// CSV text of a chart's data in long form ("series,x,y" rows), with '#' comment lines naming the
// chart, its axes and the configuration: readable by pandas (comment='#'), R and spreadsheets.
#pragma once
#include <QString>

#include "ui/history/heatmap_history.h"
#include "ui/plots/plot_content.h"

namespace normlab::ui {

QString csvFromPlot(const QString& title, const PlotContent& content, const QString& caption);
// Wide form for heatmaps: one row per column (step_first, step_last, block_0, block_1, ...).
QString csvFromHeatmap(const QString& title, const std::vector<HeatColumn>& columns, const QString& caption);
// Quotes a field when it holds a comma, quote or newline.
QString csvField(const QString& text);

}  // namespace normlab::ui
