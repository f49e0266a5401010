// Sweeps over a user's own command (docs/cli.md#sweeps-over-your-own-script): the placeholders of a
// command template ({user.NAME} per axis, {seed}, {out}), checked when the sweep is planned, and one
// point's command line with each value quoted for /bin/sh.
#pragma once
#include <string>
#include <vector>

#include "engine/sweep/sweep_plan.h"

namespace normlab {

// Axes of a command sweep are named by the user under this prefix ("user.lr").
inline constexpr const char* kUserKeyPrefix = "user.";
bool is_user_key(const std::string& key);

// Throws InputError unless every axis key is user.NAME (NAME: letters, digits, '_'), every placeholder
// of `command` is an axis key, {seed} or {out}, every axis appears in it, and its braces pair up
// ({{ and }} are literal braces).
void check_command_template(const std::string& command, const std::vector<SweepAxis>& axes);

// `text` as one /bin/sh word: single-quoted, a ' inside written as '\''.
std::string shell_quote(const std::string& text);

// The command line of `point` run in `folder`: every placeholder replaced by its value as the shell
// word shell_quote makes of it (a value's text as in override_text: 0.001, post).
std::string point_command(const std::string& command, const SweepPoint& point, const std::string& folder);

}  // namespace normlab
