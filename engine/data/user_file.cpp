// read_user_file: the checks before reading (status, size) and the read itself, each with its message.
#include "engine/data/user_file.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "engine/core/errors.h"

namespace normlab {

std::string read_user_file(const std::string& path, const UserFileRole& role) {
    const std::string named = role.key + ": " + role.what + " '" + path + "'";
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    if (!std::filesystem::exists(status)) throw InputError(named + " does not exist; " + role.hint);
    if (std::filesystem::is_directory(status))
        throw InputError(role.key + ": '" + path + "' is a directory, not a " + role.what + "; " + role.hint);
    if (!std::filesystem::is_regular_file(status))
        throw InputError(role.key + ": '" + path + "' is not a regular file (a device, pipe or socket); " +
                         role.hint);
    // The whole file is held in memory: a file beyond the limit is refused before reading.
    if (const uintmax_t size = std::filesystem::file_size(path, error); !error && size > role.max_bytes)
        throw InputError(named + " is " + std::to_string(size >> 20) + " MiB; NormLab reads at most " +
                         std::to_string(role.max_bytes >> 20) + " MiB of a " + role.what +
                         " into memory: use a smaller file (a slice of it)");
    std::ifstream file(path, std::ios::binary);
    if (!file) throw InputError(named + " cannot be opened (check its permissions); " + role.hint);
    std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (file.bad())
        throw InputError(role.key + ": reading " + role.what + " '" + path + "' failed; " + role.hint);
    return bytes;
}

}  // namespace normlab
