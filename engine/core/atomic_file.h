// Whole-or-nothing file writes shared by the run folder, probe.json, sweep.json and safetensors
// checkpoints: the bytes go to a new temporary file of a unique name beside PATH (created with O_EXCL
// and O_NOFOLLOW, so no planted file or link is written through), every write is checked, the file is
// fsync'ed and closed, renamed over PATH, and the directory fsync'ed: after a crash, a full disk or a
// power loss PATH holds the old bytes or the new, never a mix or an empty file.
#pragma once
#include <functional>
#include <ostream>
#include <string>

#include "engine/core/write_fence.h"

namespace normlab {

// Writes what `write` puts into the stream to `path` atomically and durably. Errors start with
// `context` (e.g. "cannot write checkpoint 'x.safetensors'"): InputError when the directory is missing
// or not writable or the rename fails, ResourceError when the data could not be written or synced
// (disk full, file size limit). The temporary file is removed on every failure; PATH is untouched.
// `fence` runs before the temporary file is created and again right before the rename; what it throws
// (WriteFenceLost) leaves PATH untouched and no temporary file.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                           const std::string& context, const WriteFence& fence = {});

// The same for a text; errors start with "cannot write 'PATH'".
void write_file_atomically(const std::string& path, const std::string& text, const WriteFence& fence = {});

// The name of a new temporary file beside `path`: PATH.<pid>.<n>.tmp, unique within the process.
std::string temporary_path_for(const std::string& path);

}  // namespace normlab
