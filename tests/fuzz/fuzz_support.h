// Shared by the fuzz targets: one input split into parts at the byte 0x1e (the files of a folder), a
// scratch folder per process, file writing, and FUZZ_CHECK, which aborts naming a broken invariant (a
// finding for libFuzzer, a failure for the replay test).
#pragma once
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#define FUZZ_CHECK(condition, what) \
    ((condition) ? void() : normlab::fuzz::fail(#condition, what, __FILE__, __LINE__))

namespace normlab::fuzz {

inline constexpr char kPartSeparator = '\x1e';

[[noreturn]] inline void fail(const char* condition, const std::string& what, const char* file, int line) {
    std::fprintf(stderr, "fuzz invariant broken at %s:%d: %s (%s)\n", file, line, what.c_str(), condition);
    std::fflush(stderr);
    std::abort();
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// The input cut at each 0x1e into at most `max_parts` parts (the last part keeps any further 0x1e).
inline std::vector<std::string> split_parts(std::string_view input, size_t max_parts) {
    std::vector<std::string> parts;
    while (parts.size() + 1 < max_parts) {
        const size_t at = input.find(kPartSeparator);
        if (at == std::string_view::npos) break;
        parts.emplace_back(input.substr(0, at));
        input.remove_prefix(at + 1);
    }
    parts.emplace_back(input);
    return parts;
}

// A folder of this process's own under $TMPDIR (else /tmp), made once and removed at exit.
inline const std::filesystem::path& scratch_dir() {
    static const std::filesystem::path dir = [] {
        const char* tmp = std::getenv("TMPDIR");
        std::filesystem::path path = std::filesystem::path(tmp && *tmp ? tmp : "/tmp") /
                                     ("normlab-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(path);
        std::atexit([] {
            std::error_code ignored;
            std::filesystem::remove_all(scratch_dir(), ignored);
        });
        return path;
    }();
    return dir;
}

// An empty folder `name` inside the scratch folder (what a previous input left there removed).
inline std::filesystem::path fresh_dir(const std::string& name) {
    const std::filesystem::path dir = scratch_dir() / name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

inline void write_file(const std::filesystem::path& path, std::string_view content) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(content.data(), static_cast<std::streamsize>(content.size()));
    FUZZ_CHECK(file.good(), "writing " + path.string());
}

inline void append_file(const std::filesystem::path& path, std::string_view content) {
    std::ofstream file(path, std::ios::binary | std::ios::app);
    file.write(content.data(), static_cast<std::streamsize>(content.size()));
    FUZZ_CHECK(file.good(), "appending to " + path.string());
}

// Whether a sweep point id is safe as one folder name (no separators, no "." or ".."): what the sweep
// targets check the ids a plan makes and a loaded sweep.json holds against.
inline bool safe_file_name(const std::string& id) {
    if (id.empty() || id == "." || id == "..") return false;
    for (const char c : id)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '+' && c != '-' && c != '_')
            return false;
    return true;
}

}  // namespace normlab::fuzz
