// Command-line options of the desktop app (normlab --help): the config to open, autostart, and the
// screenshot mode used by scripts and the README (run N steps, save the window as PNG, quit).
#pragma once
#include <QSize>
#include <QString>
#include <QStringList>
#include <optional>

#include "engine/core/step_range.h"
#include "ui/export/chart_export.h"

namespace normlab::gui {

struct GuiOptions {
    QString preset;
    QString configPath;
    QString experimentPath;
    QStringList sets;           // key=value overrides
    QString lesson;             // a lesson title prefix, started at launch
    int lessonSeeds = 1;        // --lesson-seeds: each of its runs from this many seeds
    QStringList openFolders;    // run folders to open (--open DIR...)
    QStringList replayFolders;  // recorded run folders to play back (--replay DIR...)
    double replaySpeed = 10.0;  // --replay-speed: steps a second
    // Headless figure export of the opened runs (normlab-cli export runs this): the file, and the
    // chart's id or the whole dashboard; the figure's size, DPI, fonts and caption (--export-preset
    // slide sets them for a slide); run labels "RUN=TEXT" (a run's legend name, RUN its folder's name).
    QString exportPath, exportChart;
    bool exportDashboard = false;
    ui::ImageExportOptions figure;
    QStringList labels;
    std::optional<normlab::StepRange> steps;  // --steps A:B: the time charts' step axis
    bool listCharts = false;
    bool listLessons = false;  // title, presets and pause step of each lesson, tab-separated
    bool autostart = false;
    std::optional<long long> quitAfterSteps;
    QString screenshotPath;
    QString saveExperimentPath;  // --save-experiment: where a scripted run saves its experiment
    QSize windowSize;
    bool presentation = false;
    QStringList stage;  // --stage A[,B]: presentation's stage with these charts
    bool help = false;
    bool version = false;
};

// Parses argv (without the program name). Throws normlab::InputError naming the bad option.
GuiOptions parseGuiOptions(const QStringList& arguments);
QString guiHelpText();

}  // namespace normlab::gui
