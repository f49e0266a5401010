// `normlab-cli presets`: one line per preset, its name and what it shows.
// The list comes from engine/config/presets.cpp, so the CLI, the GUI and the tests name the same runs.
#include <cstdio>
#include <iostream>

#include "app/cli/subcommands.h"
#include "engine/config/presets.h"
#include "engine/core/errors.h"

namespace normlab::cli {

int run_presets(int argc, char** argv) {
    for (int i = 2; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--help" || flag == "-h") {
            std::cout << "usage: normlab-cli presets\n\nLists every preset: name, then what it shows. Train "
                         "one with\n"
                         "normlab-cli train --preset NAME --out DIR.\n";
            return 0;
        }
        throw InputError("unknown option '" + flag + "'; presets takes no options");
    }
    for (const Preset& preset : presets())
        std::printf("%-18s %s\n", preset.name.c_str(), preset.summary.c_str());
    return 0;
}

}  // namespace normlab::cli
