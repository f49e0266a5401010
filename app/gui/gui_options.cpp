// Parsing of normlab's command line.
#include "app/gui/gui_options.h"

#include <functional>

#include "engine/core/errors.h"
#include "ui/controls/lessons.h"

namespace normlab::gui {

namespace {
[[noreturn]] void fail(const QString& message) {
    throw normlab::InputError(message.toStdString());
}

// WIDTHxHEIGHT with each side in [lo, hi].
QSize parseSize(const QString& flag, const QString& text, int lo, int hi) {
    const QStringList parts = text.split(QLatin1Char('x'));
    bool okWidth = false, okHeight = false;
    const int width = parts.size() == 2 ? parts[0].toInt(&okWidth) : 0;
    const int height = parts.size() == 2 ? parts[1].toInt(&okHeight) : 0;
    if (!okWidth || !okHeight || width < lo || height < lo || width > hi || height > hi)
        fail(QStringLiteral("%1 needs WIDTHxHEIGHT between %2x%2 and %3x%3, got '%4'")
                 .arg(flag)
                 .arg(lo)
                 .arg(hi)
                 .arg(text));
    return QSize(width, height);
}

double parseNumber(const QString& flag, const QString& text, double lo, double hi) {
    bool ok = false;
    const double number = text.toDouble(&ok);
    if (!ok || number < lo || number > hi)
        fail(QStringLiteral("%1 needs a number from %2 to %3, got '%4'").arg(flag).arg(lo).arg(hi).arg(text));
    return number;
}

int parseWholeNumber(const QString& flag, const QString& text, int lo, int hi) {
    bool ok = false;
    const int number = text.toInt(&ok);
    if (!ok || number < lo || number > hi)
        fail(QStringLiteral("%1 needs a whole number from %2 to %3, got '%4'")
                 .arg(flag)
                 .arg(lo)
                 .arg(hi)
                 .arg(text));
    return number;
}

// --export-preset NAME: the figure options it stands for (later size, DPI and font options win).
ui::ImageExportOptions exportPreset(const QString& name) {
    if (name == QLatin1String("slide")) return ui::ImageExportOptions::slide();
    fail(QStringLiteral("--export-preset '%1' is not a preset; presets: slide").arg(name));
}

// --label RUN=TEXT, checked for its shape (whether RUN is a run is known once the runs are open).
QString parseLabel(const QString& text) {
    const qsizetype equals = text.indexOf(QLatin1Char('='));
    if (equals <= 0 || equals == text.size() - 1)
        fail(QStringLiteral("--label needs RUN=TEXT (RUN: the run folder's name), got '%1'").arg(text));
    return text;
}

// Reads the value of the option being parsed (the next argument).
using ValueReader = std::function<QString()>;

// What to open or train: true when `flag` is one of these options.
bool parseSourceOption(const QString& flag, const ValueReader& value, GuiOptions& options) {
    if (flag == QLatin1String("--preset"))
        options.preset = value();
    else if (flag == QLatin1String("--config"))
        options.configPath = value();
    else if (flag == QLatin1String("--experiment"))
        options.experimentPath = value();
    else if (flag == QLatin1String("--set"))
        options.sets << value();
    else if (flag == QLatin1String("--lesson"))
        options.lesson = value();
    else if (flag == QLatin1String("--lesson-seeds"))
        options.lessonSeeds = parseWholeNumber(flag, value(), 1, ui::kMaxLessonSeeds);
    else
        return false;
    return true;
}

// Headless figure export and the charts' step range.
bool parseExportOption(const QString& flag, const ValueReader& value, GuiOptions& options) {
    if (flag == QLatin1String("--export"))
        options.exportPath = value();
    else if (flag == QLatin1String("--chart"))
        options.exportChart = value();
    else if (flag == QLatin1String("--dashboard"))
        options.exportDashboard = true;
    else if (flag == QLatin1String("--list-charts"))
        options.listCharts = true;
    else if (flag == QLatin1String("--list-lessons"))
        options.listLessons = true;
    else if (flag == QLatin1String("--figure-size"))
        options.figure.size = parseSize(flag, value(), 64, 16384);
    else if (flag == QLatin1String("--export-preset"))
        options.figure = exportPreset(value());
    else if (flag == QLatin1String("--no-caption"))
        options.figure.caption = false;
    else if (flag == QLatin1String("--label"))
        options.labels << parseLabel(value());
    else if (flag == QLatin1String("--steps"))
        options.steps = normlab::parse_step_range(value().toStdString());
    else if (flag == QLatin1String("--dpi"))
        options.figure.dpi = parseNumber(flag, value(), 36, 2400);
    else if (flag == QLatin1String("--font-size"))
        options.figure.fontPoints = parseNumber(flag, value(), 4, 72);
    else
        return false;
    return true;
}

// The window itself: start, quit, screenshot, size, presentation mode, help and version.
bool parseWindowOption(const QString& flag, const ValueReader& value, GuiOptions& options) {
    if (flag == QLatin1String("--help") || flag == QLatin1String("-h")) {
        options.help = true;
    } else if (flag == QLatin1String("--version")) {
        options.version = true;
    } else if (flag == QLatin1String("--autostart")) {
        options.autostart = true;
    } else if (flag == QLatin1String("--presentation")) {
        options.presentation = true;
    } else if (flag == QLatin1String("--stage")) {
        options.stage = value().split(QLatin1Char(','), Qt::SkipEmptyParts);
        if (options.stage.isEmpty() || options.stage.size() > 2)
            fail(QStringLiteral("--stage needs one or two chart ids, e.g. --stage loss,block_gradient"));
    } else if (flag == QLatin1String("--screenshot")) {
        options.screenshotPath = value();
    } else if (flag == QLatin1String("--save-experiment")) {
        options.saveExperimentPath = value();
    } else if (flag == QLatin1String("--quit-after-steps")) {
        bool ok = false;
        const QString text = value();
        const long long steps = text.toLongLong(&ok);
        if (!ok || steps < 1)
            fail(QStringLiteral("--quit-after-steps needs a whole number >= 1, got '%1'").arg(text));
        options.quitAfterSteps = steps;
    } else if (flag == QLatin1String("--replay-speed")) {
        options.replaySpeed = parseNumber(flag, value(), 0.1, 10000);
    } else if (flag == QLatin1String("--size")) {
        options.windowSize = parseSize(flag, value(), 640, 8192);
    } else {
        return false;
    }
    return true;
}

// Options that each parse but do not go together.
void checkCombinations(const GuiOptions& options) {
    const int sources = !options.preset.isEmpty() + !options.configPath.isEmpty() +
                        !options.experimentPath.isEmpty() + !options.lesson.isEmpty();
    if (sources > 1) fail(QStringLiteral("give at most one of --preset, --config, --experiment, --lesson"));
    // A lesson's runs are its presets, compared as they are: a --set would be silently dropped.
    if (!options.lesson.isEmpty() && !options.sets.isEmpty())
        fail(
            QStringLiteral("--set does not combine with --lesson (a lesson runs its presets as they are); "
                           "use --preset NAME --set KEY=VALUE for a changed run"));
    if (options.lessonSeeds != 1 && options.lesson.isEmpty())
        fail(QStringLiteral(
            "--lesson-seeds N needs --lesson TITLE (the lesson whose runs it trains from N seeds)"));
    if (!options.labels.isEmpty() && options.exportPath.isEmpty())
        fail(QStringLiteral("--label RUN=TEXT names runs in an export: it needs --export FILE"));
    if (!options.exportPath.isEmpty() &&
        (options.openFolders.isEmpty() || options.exportDashboard == !options.exportChart.isEmpty()))
        fail(QStringLiteral("--export FILE needs --open DIR... and exactly one of --chart ID, --dashboard"));
    if (!options.screenshotPath.isEmpty() && !options.quitAfterSteps && options.openFolders.isEmpty() &&
        options.experimentPath.isEmpty())
        fail(
            QStringLiteral("--screenshot FILE needs --quit-after-steps N (when to take it), --open DIR or "
                           "--experiment FILE"));
    if (!options.replayFolders.isEmpty() &&
        (!options.openFolders.isEmpty() || !options.exportPath.isEmpty() ||
         !options.experimentPath.isEmpty() || !options.lesson.isEmpty() || !options.preset.isEmpty() ||
         !options.configPath.isEmpty() || options.autostart))
        fail(
            QStringLiteral("--replay plays recorded runs on their own: it does not combine with --open, "
                           "--export, --experiment, --lesson, --preset, --config or --autostart"));
    if (!options.saveExperimentPath.isEmpty() && !options.quitAfterSteps)
        fail(QStringLiteral("--save-experiment FILE needs --quit-after-steps N (when to save it)"));
}
}  // namespace

QString guiHelpText() {
    return QStringLiteral(
        "usage: normlab [--preset NAME | --config FILE | --experiment FILE] [--set KEY=VALUE]...\n"
        "               [--lesson TITLE [--lesson-seeds N]] [--autostart] [--quit-after-steps N] "
        "[--screenshot FILE]\n"
        "               [--save-experiment FILE] [--size WxH] [--presentation] [--stage A[,B]]\n"
        "       normlab --replay DIR [DIR...] [--replay-speed STEPS_PER_S] [--quit-after-steps N\n"
        "               --screenshot FILE] [--size WxH] [--presentation] [--stage A[,B]]\n"
        "       normlab --experiment FILE --screenshot FILE [--size WxH]\n"
        "       normlab --open DIR [DIR...] [--screenshot FILE] [--size WxH] [--steps A:B]\n"
        "       normlab --open DIR [DIR...] --export FILE (--chart ID | --dashboard) [--figure-size WxH]\n"
        "               [--dpi N] [--font-size PT] [--steps A:B] [--export-preset slide] [--no-caption]\n"
        "               [--label RUN=TEXT]...                        (what normlab-cli export runs)\n"
        "       normlab --list-charts | --list-lessons\n"
        "       normlab --help | --version\n"
        "\n"
        "Opens the NormLab window. Runs are written to run folders under $NORMLAB_RUNS_DIR (default "
        "~/normlab-runs).\n"
        "  --preset NAME          open a preset (normlab-cli presets lists them)\n"
        "  --config FILE          open a config JSON\n"
        "  --experiment FILE      open a saved experiment; with --screenshot: save it once every run's\n"
        "                         curves are read, then quit (exit 2 naming runs whose curves cannot be)\n"
        "  --set KEY=VALUE        override a config key (repeatable)\n"
        "  --lesson TITLE         start the lesson whose title begins with TITLE (e.g. \"Post-LN\")\n"
        "  --lesson-seeds N       train each of its runs from N seeds (1-10, default 1), drawn as their\n"
        "                         mean with a 95% interval band\n"
        "  --open DIR...          open run folders (or folders of run folders) written by normlab-cli,\n"
        "                         a sweep or another machine; with --screenshot: save it once they are\n"
        "                         read, then quit\n"
        "  --replay DIR...        play recorded run folders (or a folder of them, a recorded lesson) as\n"
        "                         if training: Space pauses, F10 steps; a lesson's recording pauses where\n"
        "                         the lesson does; with --quit-after-steps N: until step N, then quit\n"
        "  --replay-speed S       steps a second of the replay (default 10)\n"
        "  --steps A:B            the time charts show steps A to B (A: or :B leave one end open)\n"
        "  --autostart            start training at once\n"
        "  --quit-after-steps N   quit when the first run reaches step N (or every run ended); with\n"
        "                         --open and nothing to train, the first opened run being written\n"
        "  --screenshot FILE      with --quit-after-steps: save a PNG of the window before quitting\n"
        "  --save-experiment FILE with --quit-after-steps: save the experiment (its runs, live changes,\n"
        "                         notes and layout) before quitting; a file replaced is kept as FILE.bak\n"
        "  --size WxH             window size, e.g. 1680x1020 (a sweep's map too)\n"
        "  --presentation         start in presentation mode (F11)\n"
        "  --stage A[,B]          start on the stage (Shift+F11): presentation with one or two big\n"
        "                         charts by id (--list-charts), e.g. --stage loss,block_gradient;\n"
        "                         Page Down / Page Up change the last one\n"
        "  --list-lessons         print each lesson's title, presets and pause step, tab-separated\n");
}

GuiOptions parseGuiOptions(const QStringList& arguments) {
    GuiOptions options;
    for (int i = 0; i < arguments.size(); ++i) {
        const QString flag = arguments[i];
        const ValueReader value = [&]() -> QString {
            if (i + 1 >= arguments.size())
                fail(QStringLiteral("%1 needs a value; see normlab --help").arg(flag));
            return arguments[++i];
        };
        if (flag == QLatin1String("--open") || flag == QLatin1String("--replay")) {
            QStringList& folders =
                flag == QLatin1String("--open") ? options.openFolders : options.replayFolders;
            while (i + 1 < arguments.size() && !arguments[i + 1].startsWith(QLatin1String("--")))
                folders << arguments[++i];
            if (folders.isEmpty()) fail(QStringLiteral("%1 needs at least one run folder").arg(flag));
        } else if (!parseSourceOption(flag, value, options) && !parseExportOption(flag, value, options) &&
                   !parseWindowOption(flag, value, options)) {
            fail(QStringLiteral("unknown option '%1'; see normlab --help").arg(flag));
        }
    }
    checkCombinations(options);
    return options;
}

}  // namespace normlab::gui
