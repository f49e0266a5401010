// NormLab's version and the commit it was built from (generated at build time by
// cmake/write_version.cmake), printed by `--version` and recorded with runs.
#pragma once
#include <string>

namespace normlab {

const char* version();       // "0.1.0"
const char* build_commit();  // short hash, "-modified" when built from uncommitted changes, or "unknown"

// "NormLab 0.1.0 (commit 1a2b3c4d5e6f)": the line `--version` prints.
inline std::string version_line() {
    return std::string("NormLab ") + version() + " (commit " + build_commit() + ")";
}

}  // namespace normlab
