// normlab: the desktop app's entry point. Parses options (bad ones exit 2 with a message), opens the
// window with the requested config, preset, experiment or lesson, and optionally starts, runs N steps,
// saves a screenshot and quits (also under QT_QPA_PLATFORM=offscreen).
#include <QApplication>
#include <QFileInfo>
#include <QIcon>
#include <cstdio>
#include <cstdlib>

#include "app/gui/gui_options.h"
#include "app/gui/main_window.h"
#include "app/gui/scripted_run.h"
#include "engine/config/config_source.h"
#include "engine/core/errors.h"
#include "engine/core/version.h"
#include "engine/selfcheck/gpu_selftest.h"
#include "ui/controls/lessons.h"
#include "ui/dashboard.h"

namespace {
// Applies the options to the window; throws InputError for a bad preset, config or lesson.
// Opened folders and nothing to train: --quit-after-steps then waits for the first watched run.
bool onlyWatches(const normlab::gui::GuiOptions& options) {
    return !options.openFolders.isEmpty() && !options.autostart && options.preset.isEmpty() &&
           options.configPath.isEmpty() && options.sets.isEmpty() && options.experimentPath.isEmpty() &&
           options.lesson.isEmpty();
}

// Any option that makes the run a script: it ends by itself (ScriptedRun), never asking anything.
bool isScripted(const normlab::gui::GuiOptions& options) {
    return options.quitAfterSteps || !options.screenshotPath.isEmpty() || !options.exportPath.isEmpty();
}

void openRequested(normlab::gui::MainWindow& window, normlab::gui::ScriptedRun& script,
                   const normlab::gui::GuiOptions& options) {
    if (!options.experimentPath.isEmpty()) {
        QStringList unreadable;
        const QString error = window.openExperiment(options.experimentPath, &unreadable);
        if (!error.isEmpty()) throw normlab::InputError(error.toStdString());
        // --experiment FILE --screenshot F: once every saved run's curves are read.
        if (!options.quitAfterSteps && !options.screenshotPath.isEmpty())
            script.screenshotWhenOpened(options.screenshotPath, std::nullopt, unreadable);
    }
    if (!options.lesson.isEmpty()) {
        for (const normlab::ui::Lesson& lesson : normlab::ui::lessons()) {
            if (!lesson.title.startsWith(options.lesson, Qt::CaseInsensitive)) continue;
            window.startLesson(lesson, options.lessonSeeds);
            return;
        }
        QString titles;
        for (const normlab::ui::Lesson& lesson : normlab::ui::lessons())
            titles += QStringLiteral("\n  ") + lesson.title;
        throw normlab::InputError(
            ("no lesson title begins with '" + options.lesson + "'; lessons:" + titles).toStdString());
    }
    if (!options.preset.isEmpty() || !options.configPath.isEmpty() || !options.sets.isEmpty()) {
        const auto given = [](const QString& text) {
            return text.isEmpty() ? std::nullopt : std::optional<std::string>(text.toStdString());
        };
        std::vector<std::string> sets;
        for (const QString& assignment : options.sets) sets.push_back(assignment.toStdString());
        const normlab::Config config =
            normlab::resolve_config(given(options.configPath), given(options.preset), sets);
        window.loadConfig(config, options.preset.isEmpty() ? QStringLiteral("run 1") : options.preset);
    }
    // --quit-after-steps means a scripted run: it starts by itself.
    if ((options.autostart || options.quitAfterSteps) && options.lesson.isEmpty() && !onlyWatches(options) &&
        options.replayFolders.isEmpty()) {
        const QString error = window.startRuns();
        if (!error.isEmpty()) throw normlab::InputError("cannot start: " + error.toStdString());
    }
}

// The screenshot's folder must exist and be writable before any training is spent on it.
void checkScreenshotPath(const QString& path) {
    if (path.isEmpty()) return;
    const QFileInfo file(path);
    const QFileInfo folder(file.absolutePath());
    if (!folder.isDir() || !folder.isWritable())
        throw normlab::InputError(("--screenshot " + path + ": folder " + folder.absoluteFilePath() +
                                   " does not exist or is not writable; create it or choose another path")
                                      .toStdString());
    if (file.suffix().compare(QLatin1String("png"), Qt::CaseInsensitive) != 0)
        throw normlab::InputError(
            ("--screenshot " + path + ": the screenshot is a PNG; name it *.png").toStdString());
}

// argv without the program name, decoded as Qt would, before any QApplication exists.
QStringList argumentsOf(int argc, char** argv) {
    QStringList arguments;
    for (int i = 1; i < argc; ++i) arguments << QString::fromLocal8Bit(argv[i]);
    return arguments;
}

// Before the QApplication exists: how the engine's threads wait, and which platform draws.
void prepareEnvironment(const normlab::gui::GuiOptions& options) {
    // The engine's OpenMP threads share the cores with the GUI thread: idle threads must sleep, not
    // spin (a user's explicit setting wins).
    setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
    // Headless modes draw offscreen: no display needed.
    if (!options.exportPath.isEmpty() || options.listCharts) setenv("QT_QPA_PLATFORM", "offscreen", 1);
    // A scripted screenshot needs no screen: without a display it is drawn offscreen (a chosen
    // platform wins) instead of Qt aborting for want of one.
    const bool noDisplay =
        qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
    if (!options.screenshotPath.isEmpty() && noDisplay) setenv("QT_QPA_PLATFORM", "offscreen", 0);
}

// normlab --list-charts: every chart id and title.
int listCharts() {
    normlab::ui::TelemetryStore store;
    const normlab::ui::Dashboard dashboard(store);
    for (const normlab::ui::ChartPanel* panel : dashboard.panels())
        std::printf("%-16s %s\n", panel->id().toUtf8().constData(), panel->title().toUtf8().constData());
    std::printf("%-16s %s\n", normlab::gui::MainWindow::kStabilityMapChart,
                "Stability map and final loss against lr (of a sweep folder)");
    return 0;
}

void setApplicationIdentity() {
    QApplication::setOrganizationName(QStringLiteral("NormLab"));
    QApplication::setApplicationName(QStringLiteral("NormLab"));
    QApplication::setApplicationVersion(QString::fromLatin1(normlab::version()));
    QApplication::setDesktopFileName(QStringLiteral("org.normlab.NormLab"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/normlab/icon.svg")));
}

// --open: reads the folders and arranges what happens once they are read (zoom, screenshot, export).
// False, after saying why, when a folder cannot be read and a screenshot or export depends on it.
bool openFolders(normlab::gui::MainWindow& window, normlab::gui::ScriptedRun& script,
                 const normlab::gui::GuiOptions& options) {
    const QStringList problems = window.openRunFolders(options.openFolders);
    if (!problems.isEmpty() && (!options.screenshotPath.isEmpty() || !options.exportPath.isEmpty())) {
        std::fprintf(stderr, "normlab: %s\n", problems.join(QLatin1Char('\n')).toUtf8().constData());
        return false;
    }
    if (options.steps) script.zoomStepsWhenOpened(*options.steps);  // before what it is for
    if (onlyWatches(options) && options.quitAfterSteps)
        script.screenshotWhenOpened(options.screenshotPath, *options.quitAfterSteps);
    else if (!options.quitAfterSteps && !options.screenshotPath.isEmpty() && options.experimentPath.isEmpty())
        script.screenshotWhenOpened(options.screenshotPath);
    if (!options.exportPath.isEmpty())
        script.exportWhenOpened(options.exportPath, options.exportChart, options.figure, options.labels);
    return true;
}
}  // namespace

int main(int argc, char** argv) {
    // Options are read before the QApplication exists, so --help, --version and bad options answer on a
    // machine without a display too (QApplication would abort there).
    normlab::gui::GuiOptions options;
    try {
        options = normlab::gui::parseGuiOptions(argumentsOf(argc, argv));
        checkScreenshotPath(options.screenshotPath);
    } catch (const normlab::InputError& error) {
        std::fprintf(stderr, "normlab: %s\n", error.what());
        return 2;
    }
    if (options.help) {
        std::printf("%s", normlab::gui::guiHelpText().toUtf8().constData());
        return 0;
    }
    if (options.version) {
        std::printf("normlab: %s\n", normlab::version_line().c_str());
        return 0;
    }
    if (options.listLessons) {  // for scripts (scripts/record_lessons.sh): the lesson table as it is
        for (const normlab::ui::Lesson& lesson : normlab::ui::lessons())
            std::printf("%s\t%s\t%d\n", lesson.title.toUtf8().constData(),
                        lesson.presets.join(QLatin1Char(',')).toUtf8().constData(), lesson.pauseAtStep);
        return 0;
    }
    prepareEnvironment(options);
    normlab::install_gpu_selfcheck();  // a GPU is used only once it passed NormLab's self-check
    QApplication app(argc, argv);
    if (options.listCharts) return listCharts();
    setApplicationIdentity();
    normlab::gui::MainWindow window;
    if (options.windowSize.isValid()) window.setRequestedSize(options.windowSize);
    if (!options.stage.isEmpty())
        if (const QString problem = window.setStageCharts(options.stage); !problem.isEmpty()) {
            std::fprintf(stderr, "normlab: --stage: %s\n", qPrintable(problem));
            return 2;
        }
    // Before the runs start: a scripted run skips lesson pause points.
    window.setScripted(isScripted(options));
    auto& script = *new normlab::gui::ScriptedRun(window);  // owned by the window
    if (options.quitAfterSteps && !onlyWatches(options))
        script.quitAfterSteps(*options.quitAfterSteps, options.screenshotPath, options.saveExperimentPath);
    if (!options.openFolders.isEmpty() && !openFolders(window, script, options)) return 2;
    if (!options.replayFolders.isEmpty()) {
        // Every folder must play under a script (its picture depends on them); a window plays the rest.
        const QStringList problems = window.replayFolders(options.replayFolders, options.replaySpeed);
        if (!problems.isEmpty()) {
            std::fprintf(stderr, "normlab: %s\n", problems.join(QLatin1Char('\n')).toUtf8().constData());
            if (!window.replay().active() || isScripted(options)) return 2;
        }
        // The picture is of step N exactly: the replay stops there.
        if (options.quitAfterSteps) window.replay().setPausePoint(*options.quitAfterSteps, QString());
    }
    try {
        openRequested(window, script, options);
    } catch (const normlab::InputError& error) {
        std::fprintf(stderr, "normlab: %s\n", error.what());
        return 2;
    }
    window.show();
    if (options.presentation) window.setPresentation(true, !options.windowSize.isValid());
    if (!options.stage.isEmpty()) window.setStage(true, !options.windowSize.isValid());
    return QApplication::exec();
}
