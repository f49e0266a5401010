// The fuzz targets without libFuzzer (ctest fuzz_replay): every file of corpus/<target>/ and
// regressions/<target>/ run through its target, and the dictionaries checked against the engine's key
// tables. `--print-dict config|metrics` prints the generated part of dict/<target>.dict.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/config/config.h"
#include "engine/io/record_fields.h"

#define NORMLAB_FUZZ_TARGET(name) extern "C" int normlab_fuzz_##name(const uint8_t* data, size_t size);
#include "fuzz_targets.inc"
#undef NORMLAB_FUZZ_TARGET

namespace {

namespace fs = std::filesystem;

struct Target {
    const char* name;
    int (*run)(const uint8_t*, size_t);
};

const Target kTargets[] = {
#define NORMLAB_FUZZ_TARGET(name) {#name, normlab_fuzz_##name},
#include "fuzz_targets.inc"
#undef NORMLAB_FUZZ_TARGET
};

// The input being replayed, named by the SIGABRT handler when an invariant check aborts.
char g_current[4096] = "";

void on_abort(int) {
    const char prefix[] = "normlab_fuzz_replay: aborted while replaying ";
    [[maybe_unused]] ssize_t ignored = ::write(2, prefix, sizeof prefix - 1);
    ignored = ::write(2, g_current, std::strlen(g_current));
    ignored = ::write(2, "\n", 1);
    std::signal(SIGABRT, SIG_DFL);
    std::raise(SIGABRT);
}

std::string dict_line(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return out + "\"";
}

// A dictionary line for `text` in JSON quotes followed by `suffix` (":" for a key). Appended piece by
// piece: GCC 12 warns (-Wrestrict, wrongly) on "literal" + std::string here.
std::string json_entry(const std::string& text, const char* suffix) {
    std::string entry = "\"";
    entry += text;
    entry += '"';
    entry += suffix;
    return dict_line(entry);
}

// The dictionary lines the engine's tables give: JSON keys and sections, --set forms and choices.
std::vector<std::string> config_dict() {
    std::set<std::string> entries;
    for (const std::string& key : normlab::config_keys()) {
        const size_t dot = key.find('.');
        entries.insert(json_entry(key.substr(dot + 1), ":"));
        if (dot != std::string::npos) entries.insert(json_entry(key.substr(0, dot), ": {"));
        entries.insert(dict_line(key + "="));
        for (const std::string& choice : normlab::config_key_choices(key))
            entries.insert(json_entry(choice, ""));
    }
    return {entries.begin(), entries.end()};
}

std::vector<std::string> metrics_dict() {
    using namespace normlab::record_fields;
    std::set<std::string> entries;
    for (const LayerField& field : kLayerFields) entries.insert(json_entry(field.name, ":"));
    for (const GradField& field : kGradFields) entries.insert(json_entry(field.name, ":"));
    for (const StepField& field : kStepFields) entries.insert(json_entry(field.name, ":"));
    for (const SublayerGroup& group : kSublayerGroups) {
        entries.insert(json_entry(group.name, ":"));
        for (const SublayerField& field : group.fields) entries.insert(json_entry(field.name, ":"));
    }
    return {entries.begin(), entries.end()};
}

std::vector<std::string> generated_dict(const std::string& name) {
    if (name == "config") return config_dict();
    if (name == "metrics") return metrics_dict();
    throw std::invalid_argument("no generated dictionary '" + name + "' (config, metrics)");
}

// Fails naming the generated entries `dict` lacks.
bool check_dict(const fs::path& dict, const std::string& generated) {
    std::ifstream in(dict);
    std::set<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.insert(line);
    std::vector<std::string> missing;
    for (const std::string& entry : generated_dict(generated))
        if (!lines.count(entry)) missing.push_back(entry);
    if (missing.empty()) return true;
    std::cerr << "normlab_fuzz_replay: " << dict << " lacks " << missing.size() << " entries of the engine's "
              << generated << " table (first: " << missing.front() << "); regenerate its generated part with "
              << "normlab_fuzz_replay --print-dict " << generated << "\n";
    return false;
}

std::vector<fs::path> inputs_of(const fs::path& dir) {
    std::vector<fs::path> files;
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, error))
        if (entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

// Runs every input of the target's corpus and regressions; false when one throws or none exists.
bool replay(const Target& target, const fs::path& source) {
    const std::vector<fs::path> corpus = inputs_of(source / "corpus" / target.name);
    const std::vector<fs::path> regressions = inputs_of(source / "regressions" / target.name);
    std::snprintf(g_current, sizeof g_current, "%s: the empty input", target.name);
    target.run(nullptr, 0);
    bool ok = !corpus.empty();
    if (!ok)
        std::cerr << "normlab_fuzz_replay: " << target.name << " has no seed in corpus/" << target.name
                  << "\n";
    for (const std::vector<fs::path>* files : {&corpus, &regressions}) {
        for (const fs::path& file : *files) {
            std::snprintf(g_current, sizeof g_current, "%s", file.c_str());
            std::ifstream in(file, std::ios::binary);
            const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            try {
                target.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
            } catch (const std::exception& error) {
                std::cerr << "normlab_fuzz_replay: " << file << " escaped " << target.name << " with "
                          << error.what() << "\n";
                ok = false;
            }
        }
    }
    std::cout << target.name << ": " << corpus.size() << " seeds, " << regressions.size() << " regressions"
              << (ok ? "" : " FAILED") << "\n";
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "--print-dict") {
        for (const std::string& entry : generated_dict(argv[2])) std::cout << entry << "\n";
        return 0;
    }
    if (argc != 2) {
        std::cerr << "usage: normlab_fuzz_replay TESTS_FUZZ_DIR | --print-dict config|metrics\n";
        return 2;
    }
    std::signal(SIGABRT, on_abort);
    const fs::path source = argv[1];
    bool ok = check_dict(source / "dict" / "config.dict", "config");
    for (const char* name : {"metrics_line", "run_folder"})
        ok = check_dict(source / "dict" / (std::string(name) + ".dict"), "metrics") && ok;
    for (const Target& target : kTargets) ok = replay(target, source) && ok;
    return ok ? 0 : 1;
}
