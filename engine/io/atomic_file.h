// Whole-or-nothing file writes shared by the run folder, probe.json and safetensors checkpoints: the
// bytes go to PATH.tmp in the same directory, are flushed and checked, then renamed over PATH, so a
// crash or a full disk never leaves a half-written file under the real name.
#pragma once
#include <functional>
#include <ostream>
#include <string>

namespace normlab {

// Writes what `write` puts into the stream to `path` atomically. Errors start with `context` (e.g.
// "cannot write checkpoint 'x.safetensors'"): InputError when the directory is missing or not
// writable or the rename fails, ResourceError when the data could not be written (disk full, file
// size limit). The temporary file is removed on every failure.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                           const std::string& context);

// The same for a text; errors start with "cannot write 'PATH'".
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace normlab
