// Where a sweep's workers write, and the check that keeps those writes inside the sweep folder S:
// S/runs, S/runs/<id> and S/claims must be real folders (not symbolic links, files or devices), so a
// link planted in a shared folder cannot lead a worker's writes (or its deletes) anywhere else.
#pragma once
#include <optional>
#include <string>

namespace normlab {

// What is wrong with S/<relative> ("runs/<id>", "claims") as a place to write, or nothing when each
// part of it is a real folder or missing.
std::optional<std::string> sweep_folder_problem(const std::string& sweep_dir, const std::string& relative);

// S/<relative>, each missing part created as a real folder. Throws InputError naming the part that is
// a link or not a folder and saying what to do.
std::string real_sweep_folder(const std::string& sweep_dir, const std::string& relative);

}  // namespace normlab
