// Command templates of sweeps over a user's command: one scanner walks the template's text and its
// placeholders, used both to check a template when planning and to fill one in for a point.
#include "engine/sweep/sweep_command.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

#include "engine/core/errors.h"

namespace normlab {

namespace {
// Calls on_text for each run of literal text and on_placeholder for each {name}; throws InputError for
// an unpaired brace.
void scan_template(const std::string& command, const std::function<void(const std::string&)>& on_text,
                   const std::function<void(const std::string&)>& on_placeholder) {
    std::string text;
    for (size_t i = 0; i < command.size(); ++i) {
        const char c = command[i];
        if ((c == '{' || c == '}') && i + 1 < command.size() && command[i + 1] == c) {
            text += c;  // {{ or }}: a literal brace
            ++i;
        } else if (c == '{') {
            const size_t close = command.find('}', i);
            if (close == std::string::npos)
                throw InputError("the sweep's command has a '{' without its '}' at character " +
                                 std::to_string(i + 1) + "; write {{ for a literal brace");
            on_text(text);
            text.clear();
            on_placeholder(command.substr(i + 1, close - i - 1));
            i = close;
        } else if (c == '}') {
            throw InputError("the sweep's command has a '}' without its '{' at character " +
                             std::to_string(i + 1) + "; write }} for a literal brace");
        } else {
            text += c;
        }
    }
    on_text(text);
}

bool is_user_name(const std::string& name) {
    return !name.empty() &&
           std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}
}  // namespace

bool is_user_key(const std::string& key) {
    return key.rfind(kUserKeyPrefix, 0) == 0;
}

void check_command_template(const std::string& command, const std::vector<SweepAxis>& axes) {
    std::set<std::string> keys;
    for (const SweepAxis& axis : axes)
        for (const std::string& key : axis.keys) {
            if (!is_user_key(key) || !is_user_name(key.substr(5)))
                throw InputError("a command sweep's axes are named user.NAME (letters, digits, _), not \"" +
                                 key +
                                 "\": the command sets its own training; e.g. --axis user.lr=1e-3,3e-3");
            keys.insert(key);
        }
    std::set<std::string> used;
    scan_template(
        command, [](const std::string&) {},
        [&](const std::string& name) {
            if (name != "seed" && name != "out" && !keys.count(name))
                throw InputError("the sweep's command names {" + name +
                                 "}, which is no axis; its placeholders are {seed}, {out} and the axes' "
                                 "{user.NAME}");
            used.insert(name);
        });
    for (const std::string& key : keys)
        if (!used.count(key))
            throw InputError("axis " + key + " is not in the sweep's command; put {" + key +
                             "} where the command takes its value");
}

std::string shell_quote(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string point_command(const std::string& command, const SweepPoint& point, const std::string& folder) {
    std::string out;
    scan_template(
        command, [&out](const std::string& text) { out += text; },
        [&](const std::string& name) {
            if (name == "seed") {
                out += shell_quote(std::to_string(point.seed));
            } else if (name == "out") {
                out += shell_quote(folder);
            } else {
                out += shell_quote(override_text(point.set.at(name)));
            }
        });
    return out;
}

}  // namespace normlab
