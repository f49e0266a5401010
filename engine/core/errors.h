// Exceptions the engine throws. InputError means the user gave something to fix (CLI exit code 2);
// every message names the offending key, file or value and says what would be accepted.
#pragma once
#include <stdexcept>
#include <string>

namespace normlab {

// Bad configuration, file or command: the caller should report the message and exit with code 2.
class InputError : public std::runtime_error {
  public:
    explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// A resource the machine cannot give (memory, a device): also the user's to change, so also exit 2.
class ResourceError : public InputError {
  public:
    explicit ResourceError(const std::string& message) : InputError(message) {}
};

}  // namespace normlab
