// JSON (de)serialisation of experiments through the engine's config parser, so a config in an
// experiment file is checked exactly like one given to the CLI.
#include "ui/experiment/experiment_file.h"

#include "ui/io/whole_file.h"

#include "engine/train/live_changes.h"

#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/small_file.h"

namespace normlab::ui {

namespace {
constexpr int kFormatVersion = 1;

normlab::Config configFrom(const nlohmann::json& node, const std::string& where) {
    normlab::Config config = normlab::config_from_json_text(node.dump(), where);
    try {
        normlab::validate(config);
    } catch (const normlab::InputError& error) {
        throw normlab::InputError(where + ": " + error.what());
    }
    return config;
}
// "changes": [{"step": S, "key": "train.lr", "value": "0.001"}, ...], each key a live one.
std::vector<normlab::LiveChange> changesFrom(const nlohmann::json& node, const std::string& where) {
    const std::string what = where + ": \"changes\" must be a list of {step, key, value} with live keys";
    if (!node.is_array()) throw normlab::InputError(what);
    std::vector<normlab::LiveChange> changes;
    for (const nlohmann::json& change : node) {
        if (!change.is_object() || !change.contains("step") || !change["step"].is_number_integer() ||
            !change.contains("key") || !change["key"].is_string() || !change.contains("value") ||
            !change["value"].is_string())
            throw normlab::InputError(what);
        try {
            normlab::require_live_key(change["key"].get<std::string>());
        } catch (const normlab::InputError& error) {
            throw normlab::InputError(where + ": " + error.what());
        }
        changes.push_back({change["key"].get<std::string>(), change["value"].get<std::string>(),
                           change["step"].get<int64_t>()});
    }
    return changes;
}

// "annotations": {"chart id": [{"step": x, "value": y, "text": "..."}, ...], ...}
std::map<QString, std::vector<PlotAnnotation>> annotationsFrom(const nlohmann::json& node,
                                                               const std::string& source) {
    const std::string what = source + ": \"annotations\" must map chart ids to lists of {step, value, text}";
    if (!node.is_object()) throw normlab::InputError(what);
    std::map<QString, std::vector<PlotAnnotation>> out;
    for (const auto& [chart, notes] : node.items()) {
        if (!notes.is_array()) throw normlab::InputError(what);
        for (const nlohmann::json& note : notes) {
            if (!note.is_object() || !note.contains("step") || !note["step"].is_number() ||
                !note.contains("value") || !note["value"].is_number() || !note.contains("text") ||
                !note["text"].is_string())
                throw normlab::InputError(what);
            out[QString::fromStdString(chart)].push_back(
                {note["step"].get<double>(), note["value"].get<double>(),
                 QString::fromStdString(note["text"].get<std::string>())});
        }
    }
    return out;
}
}  // namespace

QByteArray experimentToJson(const Experiment& experiment) {
    nlohmann::json json;
    json["normlab_experiment"] = kFormatVersion;
    json["config"] = normlab::config_to_json(experiment.current);
    json["active_run"] = experiment.activeRun;
    json["runs"] = nlohmann::json::array();
    for (const ExperimentRun& run : experiment.runs) {
        nlohmann::json changes = nlohmann::json::array();
        for (const normlab::LiveChange& change : run.changes)
            changes.push_back({{"step", change.at_step}, {"key", change.key}, {"value", change.value}});
        nlohmann::json saved = {{"name", run.name.toStdString()},
                                {"visible", run.visible},
                                {"config", normlab::config_to_json(run.config)},
                                {"changes", std::move(changes)},
                                {"folder", run.folder.toStdString()}};
        if (!run.group.isEmpty()) saved["group"] = run.group.toStdString();
        if (run.fork) saved["fork"] = true;
        json["runs"].push_back(std::move(saved));
    }
    json["dashboard_layout"] = experiment.dashboardLayout.toBase64().toStdString();
    json["annotations"] = nlohmann::json::object();
    for (const auto& [chart, notes] : experiment.annotations) {
        nlohmann::json list = nlohmann::json::array();
        for (const PlotAnnotation& note : notes)
            list.push_back({{"step", note.x}, {"value", note.y}, {"text", note.text.toStdString()}});
        json["annotations"][chart.toStdString()] = std::move(list);
    }
    return QByteArray::fromStdString(json.dump(2) + "\n");
}

Experiment experimentFromJson(const QByteArray& bytes, const QString& sourceName) {
    const std::string source = sourceName.toStdString();
    nlohmann::json json;
    try {
        json = normlab::parse_json(std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())),
                                   source);
    } catch (const normlab::InputError& error) {  // a syntax error, a number beyond double's range, too deep
        throw normlab::InputError(source + " is not a NormLab experiment: invalid JSON (" + error.what() +
                                  ")");
    }
    if (!json.is_object() || !json.contains("normlab_experiment"))
        throw normlab::InputError(source +
                                  " is not a NormLab experiment file (no \"normlab_experiment\" key)");
    if (!json["normlab_experiment"].is_number_integer() ||
        json["normlab_experiment"].get<int>() > kFormatVersion)
        throw normlab::InputError(source + " was written by a newer NormLab (format " +
                                  normlab::json_excerpt(json["normlab_experiment"]) +
                                  "); this version reads format 1");
    Experiment experiment;
    if (json.contains("config")) experiment.current = configFrom(json["config"], source + ": config");
    if (json.contains("runs")) {
        if (!json["runs"].is_array()) throw normlab::InputError(source + ": \"runs\" must be a list of runs");
        int index = 0;
        for (const nlohmann::json& run : json["runs"]) {
            const std::string where = source + ": runs[" + std::to_string(index++) + "]";
            if (!run.is_object() || !run.contains("config") || !run.contains("name") ||
                !run["name"].is_string())
                throw normlab::InputError(where + " needs a \"name\" (text) and a \"config\" (object)");
            ExperimentRun parsed;
            parsed.name = QString::fromStdString(run["name"].get<std::string>());
            if (run.contains("visible") && !run["visible"].is_boolean())
                throw normlab::InputError(where + ": \"visible\" must be true or false");
            parsed.visible = run.value("visible", true);
            parsed.config = configFrom(run["config"], where + ".config");
            parsed.changes = changesFrom(run.value("changes", nlohmann::json::array()), where);
            if (run.contains("folder") && run["folder"].is_string())
                parsed.folder = QString::fromStdString(run["folder"].get<std::string>());
            if (run.contains("group") && !run["group"].is_string())
                throw normlab::InputError(where + ": \"group\" must be text (the seed group's name)");
            parsed.group = QString::fromStdString(run.value("group", std::string()));
            if (run.contains("fork") && !run["fork"].is_boolean())
                throw normlab::InputError(where + ": \"fork\" must be true or false");
            // Files saved before "fork" was written: a fork was named "<parent> / fork@<step>".
            parsed.fork = run.contains("fork") ? run["fork"].get<bool>()
                                               : parsed.name.contains(QStringLiteral(" / fork"));
            experiment.runs.push_back(std::move(parsed));
        }
    }
    // Which run the controls edit; a file without it (or out of range) edits the first.
    if (json.contains("active_run") && json["active_run"].is_number_integer()) {
        const int64_t active = json["active_run"].get<int64_t>();
        if (active >= 0 && active < static_cast<int64_t>(experiment.runs.size()))
            experiment.activeRun = static_cast<int>(active);
    }
    if (json.contains("annotations")) experiment.annotations = annotationsFrom(json["annotations"], source);
    if (json.contains("dashboard_layout") && json["dashboard_layout"].is_string())
        experiment.dashboardLayout =
            QByteArray::fromBase64(QByteArray::fromStdString(json["dashboard_layout"].get<std::string>()));
    return experiment;
}

QString saveExperiment(const Experiment& experiment, const QString& path) {
    // Whole or not at all: a full disk leaves the old file.
    return writeWholeFile(path, experimentToJson(experiment));
}

Experiment loadExperiment(const QString& path) {
    // A regular file of at most 16 MB, opened without blocking (a FIFO must not hang the window).
    const std::optional<std::string> bytes = normlab::read_small_file_if_present(
        path.toStdString(), normlab::kMaxJsonFileBytes, "experiment file");
    if (!bytes) throw normlab::InputError("cannot open " + path.toStdString() + ": it does not exist");
    return experimentFromJson(QByteArray::fromStdString(*bytes), path);
}

}  // namespace normlab::ui
