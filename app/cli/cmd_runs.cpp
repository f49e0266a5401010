// `normlab-cli runs DIR...`: the runs found in the given folders (each a run folder, or a folder of
// run folders) as a table: folder, status, steps, final and validation loss, where it diverged, and the
// config keys whose values differ between the runs, which is what a reader comparing them wants; a run
// whose writer has gone quiet is "stale" (shown_status).
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/cli/subcommands.h"
#include "engine/config/config_diff.h"
#include "engine/core/errors.h"
#include "engine/core/unix_time.h"
#include "engine/io/run_folder_reader.h"

namespace normlab::cli {

namespace {
namespace fs = std::filesystem;

const char* kRunsUsage =
    "usage: normlab-cli runs DIR [DIR...] [--json]\n"
    "\n"
    "Lists the run folders in DIR (a run folder, or a folder of run folders): folder, status, steps,\n"
    "final and validation loss, the step it diverged at, and the config keys that differ between the\n"
    "runs (key=value per run; for runs of the PyTorch bridge also the script's own keys, user.NAME, and\n"
    "world_size). A run still \"running\" whose summary.json is 10 minutes old or more is shown as\n"
    "\"stale\": its writer is gone. --json prints the same as a JSON list.\n";

struct RunRow {
    std::string folder;
    RunFolderSummary summary;
    FlatConfig config;
    std::string status;  // summary.json's, or "stale" (shown_status)
};

RunRow read_row(const fs::path& folder) {
    RunFolderReader reader(folder.string());
    RunRow row;
    row.folder = folder.string();
    row.summary = reader.summary().value_or(RunFolderSummary{});
    row.config = flatten_config(reader.config(), reader.knownKeys());
    for (const auto& [key, value] : reader.writerKeys()) row.config[key] = value;  // user.*, world_size
    row.status = shown_status(row.summary, unix_seconds());
    return row;
}

std::string number_or_dash(const std::optional<double>& value) {
    if (!value) return "-";
    std::ostringstream out;
    out << std::setprecision(4) << *value;
    return out.str();
}

nlohmann::json optional_json(const std::optional<double>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}
}  // namespace

int run_runs(int argc, char** argv) {
    std::vector<fs::path> folders;
    bool as_json = false;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::cout << kRunsUsage;
            return 0;
        }
        if (arg == "--json") {
            as_json = true;
        } else if (arg.rfind("--", 0) == 0) {
            throw InputError("unknown option '" + arg + "'; see normlab-cli runs --help");
        } else {
            std::vector<std::string> notes;
            for (const std::string& folder : find_run_folders(arg, &notes)) folders.push_back(folder);
            for (const std::string& note : notes) std::cerr << "normlab-cli runs: " << note << "\n";
        }
    }
    if (folders.empty()) throw InputError("name at least one folder; see normlab-cli runs --help");
    std::vector<RunRow> rows;
    for (const fs::path& folder : folders) rows.push_back(read_row(folder));
    std::vector<FlatConfig> configs;
    for (const RunRow& row : rows) configs.push_back(row.config);
    const std::vector<std::string> keys = differing_keys(configs);

    if (as_json) {
        nlohmann::json out = nlohmann::json::array();
        for (const RunRow& row : rows) {
            nlohmann::json differs = nlohmann::json::object();
            for (const std::string& key : keys)
                differs[key] = row.config.count(key) ? row.config.at(key) : "";
            out.push_back({{"folder", row.folder},
                           {"status", row.status},
                           {"steps", row.summary.steps},
                           {"final_loss", optional_json(row.summary.final_loss)},
                           {"final_val_loss", optional_json(row.summary.final_val_loss)},
                           {"diverged_at", row.summary.diverged_at ? nlohmann::json(*row.summary.diverged_at)
                                                                   : nlohmann::json(nullptr)},
                           {"checkpoint_step", row.summary.checkpoint_step
                                                   ? nlohmann::json(*row.summary.checkpoint_step)
                                                   : nlohmann::json(nullptr)},
                           {"differs", differs}});
        }
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    std::cout << std::left << std::setw(40) << "folder" << std::setw(11) << "status" << std::setw(8)
              << "steps" << std::setw(10) << "loss" << std::setw(10) << "val loss" << std::setw(10)
              << "diverged"
              << "differs\n";
    for (const RunRow& row : rows) {
        std::string differs;
        for (const std::string& key : keys)
            differs +=
                (differs.empty() ? "" : " ") + key + "=" + (row.config.count(key) ? row.config.at(key) : "");
        std::cout << std::left << std::setw(40) << fs::path(row.folder).filename().string() << std::setw(11)
                  << row.status << std::setw(8) << row.summary.steps << std::setw(10)
                  << number_or_dash(row.summary.final_loss) << std::setw(10)
                  << number_or_dash(row.summary.final_val_loss) << std::setw(10)
                  << (row.summary.diverged_at ? std::to_string(*row.summary.diverged_at) : "-") << differs
                  << "\n";
    }
    return 0;
}

}  // namespace normlab::cli
