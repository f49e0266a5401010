// Reading a file a config key names (data.text_path, data.tokenizer): only an existing regular file
// under a size limit is read, whole, and every refusal names the key, the file and what to change.
#pragma once
#include <cstdint>
#include <string>

namespace normlab {

struct UserFileRole {
    std::string key;   // "data.text_path"
    std::string what;  // "text file"
    std::string hint;  // what to set instead, e.g. "point data.text_path at a UTF-8 text file"
    uintmax_t max_bytes = 0;
};

// The file's bytes; InputError for a missing file, a folder, a device, pipe or socket, a file above
// role.max_bytes, or one that cannot be opened or read.
std::string read_user_file(const std::string& path, const UserFileRole& role);

}  // namespace normlab
