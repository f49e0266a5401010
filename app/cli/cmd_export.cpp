// `normlab-cli export`: run folders out as data or figures. --metrics writes every logged value as one
// tidy table, CSV or Parquet (engine/io/metrics_table.h). Figures (--chart NAME, --dashboard, --list)
// are drawn by the desktop app's own code: the `normlab` program beside this one, run offscreen, so the
// CLI and the window make the same figures and no display is needed.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/subcommands.h"
#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/core/step_range.h"
#include "engine/io/metrics_table.h"
#include "engine/io/run_folder_reader.h"

namespace normlab::cli {

namespace {
namespace fs = std::filesystem;

const char* kExportUsage =
    "usage: normlab-cli export --run DIR [--run DIR...] --metrics --format csv|parquet --out FILE\n"
    "                          [--steps A:B]\n"
    "       normlab-cli export --run DIR [--run DIR...] (--chart NAME | --dashboard)\n"
    "                          --format png|svg|pdf|csv --out FILE [--size WxH] [--dpi N] [--font-size PT]\n"
    "                          [--steps A:B] [--preset slide] [--label RUN=TEXT]... [--no-caption]\n"
    "       normlab-cli export --list\n"
    "       normlab-cli export --hf DIR (--checkpoint FILE | --run RUN_DIR) [--overwrite]\n"
    "\n"
    "--metrics: every logged value of the runs as one tidy table, one row per run, step and block,\n"
    "one column per field (run-level fields on block -1): pandas.read_csv or read_parquet reads it\n"
    "in one call (Parquet: uncompressed, typed columns, empty cells as nulls).\n"
    "--chart / --dashboard: the window's figures, drawn by the `normlab` program beside normlab-cli\n"
    "offscreen (no display needed): title, axes, legend and caption, at --size pixels (default\n"
    "1600x1000) and --dpi (default 200); csv writes the chart's data. --list names the charts.\n"
    "--steps A:B keeps steps A to B (A: or :B leave one end open): the table's rows, and the step\n"
    "axis of the time charts (their csv too).\n"
    "--preset slide: 1920x1080 pixels at 96 DPI, 18 pt fonts, a one-line caption (--size, --dpi and\n"
    "--font-size still override it). --label RUN=TEXT shows run RUN (its folder's name) as TEXT in the\n"
    "legend and caption, with the colour it has in the window. --no-caption leaves the caption out.\n"
    "SVG names every font with its generic family (sans-serif), so slide software keeps a sans-serif.\n"
    "DIR is a run folder, a folder of run folders, or a sweep folder (--chart stability_map draws its\n"
    "map and final loss against lr; csv: the map's grid).\n"
    "--hf DIR: a Llama- or GPT-2-shaped checkpoint as a Hugging Face folder (normlab-cli export --hf DIR\n"
    "--help; docs/huggingface.md).\n";

// The desktop app installed or built beside this program.
fs::path desktop_app() {
    std::error_code error;
    const fs::path self = fs::read_symlink("/proc/self/exe", error);
    const fs::path app = self.parent_path() / "normlab";
    if (error || !fs::exists(app))
        throw InputError("figures are drawn by the desktop app, and no `normlab` program is beside " +
                         self.string() +
                         "; build with -DNORMLAB_GUI=ON (the default) or install the package");
    return app;
}

// Runs the desktop app offscreen with `arguments` in place of this process.
[[noreturn]] void run_desktop_app(const std::vector<std::string>& arguments) {
    const fs::path app = desktop_app();
    setenv("QT_QPA_PLATFORM", "offscreen", 1);
    std::vector<char*> argv;
    std::string program = app.string();
    argv.push_back(program.data());
    std::vector<std::string> owned = arguments;
    for (std::string& argument : owned) argv.push_back(argument.data());
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    throw InputError("cannot run " + program + ": " + std::strerror(errno));
}

void write_metrics(const std::vector<std::string>& folders, const std::string& out, const std::string& format,
                   const StepRange& steps) {
    // Written atomically: a failed export (a full disk) exits 2 and leaves the old file, no partial table.
    int64_t rows = 0;
    write_file_atomically(
        out,
        [&](std::ostream& file) {
            rows = format == "parquet" ? write_metrics_parquet(folders, file, steps)
                                       : write_metrics_csv(folders, file, steps);
        },
        "cannot write " + out);
    std::cerr << "normlab-cli export: " << rows << " rows from " << folders.size() << " run(s) to " << out
              << "\n";
}

// What `normlab-cli export` was asked for.
struct ExportRequest {
    std::vector<std::string> folders, sweeps;   // run folders found under --run, and sweep folders
    std::vector<std::string> figure_arguments;  // --size, --dpi, --font-size, --steps, ... for the window
    std::vector<std::string> preset_arguments;  // --preset's, before the others so that they override it
    std::string format, out, chart;
    StepRange steps;
    bool metrics = false, dashboard = false, list = false, help = false;
};

ExportRequest parse_export_options(int argc, char** argv) {
    ExportRequest request;
    for (int i = 2; i < argc; ++i) {
        const std::string flag = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw InputError(flag + " needs a value; see normlab-cli export --help");
            return argv[++i];
        };
        if (flag == "--help" || flag == "-h") {
            request.help = true;
            return request;
        } else if (flag == "--run") {
            // A sweep folder goes to the window as it is: it opens as its stability map.
            const std::string folder = value();
            if (fs::exists(fs::path(folder) / "sweep.json")) {
                request.sweeps.push_back(folder);
                continue;
            }
            for (const std::string& run : find_run_folders(folder)) request.folders.push_back(run);
        } else if (flag == "--format") {
            request.format = value();
        } else if (flag == "--out") {
            request.out = value();
        } else if (flag == "--chart") {
            request.chart = value();
        } else if (flag == "--metrics") {
            request.metrics = true;
        } else if (flag == "--dashboard") {
            request.dashboard = true;
        } else if (flag == "--list") {
            request.list = true;
        } else if (flag == "--steps") {
            const std::string text = value();
            request.steps = parse_step_range(text);
            request.figure_arguments.insert(request.figure_arguments.end(), {flag, text});
        } else if (flag == "--preset") {
            const std::string name = value();
            if (name != "slide")
                throw InputError("--preset '" + name + "' is not an export preset; presets: slide");
            request.preset_arguments = {"--export-preset", name};
        } else if (flag == "--label") {
            request.figure_arguments.insert(request.figure_arguments.end(), {flag, value()});
        } else if (flag == "--no-caption") {
            request.figure_arguments.push_back(flag);
        } else if (flag == "--size" || flag == "--dpi" || flag == "--font-size") {
            request.figure_arguments.push_back(flag == "--size" ? "--figure-size" : flag);
            request.figure_arguments.push_back(value());
        } else {
            throw InputError("unknown option '" + flag + "'; see normlab-cli export --help");
        }
    }
    return request;
}

void check_out_suffix(const ExportRequest& request) {
    if (fs::path(request.out).extension() != "." + request.format)
        throw InputError("--out " + request.out + " must end in ." + request.format + " to match --format " +
                         request.format);
}

// --metrics: the tidy table of every run (a sweep's points included).
void export_metrics(ExportRequest& request) {
    if (request.format != "csv" && request.format != "parquet")
        throw InputError("--metrics writes --format csv or --format parquet");
    check_out_suffix(request);
    for (const std::string& sweep : request.sweeps)
        for (const std::string& run : find_run_folders(sweep)) request.folders.push_back(run);
    write_metrics(request.folders, request.out, request.format, request.steps);
}

// --chart / --dashboard: drawn by the desktop app, which this process becomes.
[[noreturn]] void export_figure(const ExportRequest& request) {
    if (request.format != "png" && request.format != "svg" && request.format != "pdf" &&
        request.format != "csv")
        throw InputError("--format must be png, svg, pdf or csv for a chart or the dashboard");
    check_out_suffix(request);
    std::vector<std::string> arguments{"--open"};
    arguments.insert(arguments.end(), request.folders.begin(), request.folders.end());
    arguments.insert(arguments.end(), request.sweeps.begin(), request.sweeps.end());
    arguments.insert(arguments.end(), {"--export", request.out});
    if (request.dashboard) arguments.push_back("--dashboard");
    if (!request.chart.empty()) arguments.insert(arguments.end(), {"--chart", request.chart});
    arguments.insert(arguments.end(), request.preset_arguments.begin(), request.preset_arguments.end());
    arguments.insert(arguments.end(), request.figure_arguments.begin(), request.figure_arguments.end());
    run_desktop_app(arguments);
}
}  // namespace

int run_export(int argc, char** argv) {
    for (int i = 2; i < argc; ++i)
        if (std::string(argv[i]) == "--hf") return run_export_hf(argc, argv);
    ExportRequest request = parse_export_options(argc, argv);
    if (request.help) {
        std::cout << kExportUsage;
        return 0;
    }
    if (request.list) run_desktop_app({"--list-charts"});
    if (request.folders.empty() && request.sweeps.empty())
        throw InputError("name the runs with --run DIR; see normlab-cli export --help");
    if (request.out.empty()) throw InputError("--out FILE is required");
    if (request.metrics + request.dashboard + !request.chart.empty() != 1)
        throw InputError("give exactly one of --metrics, --chart NAME, --dashboard");
    if (!request.metrics) export_figure(request);
    export_metrics(request);
    return 0;
}

}  // namespace normlab::cli
