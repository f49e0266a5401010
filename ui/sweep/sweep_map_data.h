// What the stability map shows, computed from a sweep's plan and its collected points (no drawing):
// a grid over two chosen axes, one grid (facet) per value of a third, the other axes fixed at a
// chosen value, seeds averaged. Each cell holds the mean clamped final loss (min(final, initial), as
// in Wortsman et al. 2023) with its 95% Student t interval over seeds, whether that interval overlaps
// the best cell's, and how many of its points are done, diverged, running or to do.
#pragma once
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

#include "engine/sweep/sweep_collect.h"

namespace normlab::ui {

struct MapCell {
    std::optional<double> value;          // mean over finished seeds of the clamped loss
    int seeds = 0;                        // finished seeds in the mean
    std::optional<double> ciLow, ciHigh;  // its 95% t interval (two seeds or more)
    bool best = false;                    // the lowest mean of the map
    bool nearBest = false;  // another cell whose interval overlaps the best cell's: not told apart from it
    int done = 0, diverged = 0, running = 0, failed = 0, todo = 0;
    QStringList folders;  // the run folders of its points (seeds)
    QString tip;          // the point's values and results, for the tooltip
    bool operator==(const MapCell&) const = default;
};

struct MapFacet {
    QString title;
    std::vector<std::vector<MapCell>> cells;  // [y][x]
    bool operator==(const MapFacet&) const = default;
};

struct SweepMapContent {
    QString title, xTitle, yTitle, valueTitle;
    QStringList xLabels, yLabels;
    std::vector<MapFacet> facets;
    double low = 0.0, high = 1.0;  // the colour scale: the best value and the clamp (largest initial loss)
    // > 0: the scale runs from the best value to `relativeSpan` above it (0.1: +10%), cells beyond drawn
    // at its top, so differences of a few per cent near the best are visible; 0: best to the clamp.
    double relativeSpan = 0.0;
    bool operator==(const SweepMapContent&) const = default;
};

// Which axes the map shows. Axes other than x, y and facet are held at `fixed[axis]` (a value index).
struct MapChoice {
    int xAxis = 0, yAxis = 1, facetAxis = -1;
    std::vector<int> fixed;
    bool validation = true;     // the final validation loss where there is one, else the training loss
    double relativeSpan = 0.0;  // > 0: colour scale from the best cell to that fraction above it
};

// The colour scales the map offers: 0 (best to the initial loss), then spans above the best cell.
inline constexpr double kRelativeSpans[] = {0.0, 0.02, 0.05, 0.10, 0.25};

// A sensible first choice: train.lr on x if swept, then the next axis on y, a third as facets.
MapChoice defaultMapChoice(const normlab::SweepPlan& plan);
SweepMapContent buildSweepMap(const normlab::SweepPlan& plan,
                              const std::vector<normlab::CollectedPoint>& points, const MapChoice& choice,
                              const QString& sweepDir);
// The grid as CSV: one row per facet, y and x value, with the cell's value and counts.
QString sweepMapCsv(const SweepMapContent& content, const QString& caption);

}  // namespace normlab::ui
