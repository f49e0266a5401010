// Sweeps over a user's own command (engine/sweep/sweep_command.h): the plan of such a sweep, each
// placeholder filled with its point's value quoted for /bin/sh (checked by running sh itself), and
// the templates and axes that are refused, each by what to change.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>

#include "engine/core/errors.h"
#include "engine/sweep/sweep_command.h"
#include "engine/sweep/sweep_plan.h"

namespace normlab {
namespace {
using ojson = nlohmann::ordered_json;

SweepPlan command_plan(const std::string& command) {
    const ojson spec = {{"command", command},
                        {"axes", {{"user.lr", {0.001, 0.003}}, {"user.norm", {"layer norm", "it's"}}}},
                        {"seeds", 2}};
    return plan_sweep(sweep_spec_from_json(spec));
}

// What /bin/sh makes of a command line: its words, one per line, as printf prints them.
std::string shell_words(const std::string& command) {
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(("printf '%s\\n' " + command).c_str(), "r"), pclose);
    std::string out;
    std::array<char, 256> buffer{};
    while (pipe && fgets(buffer.data(), buffer.size(), pipe.get())) out += buffer.data();
    return out;
}

TEST(SweepCommand, PointsFillEveryPlaceholderAsOneShellWord) {
    const SweepPlan plan = command_plan("--lr {user.lr} --norm {user.norm} --seed {seed} --out {out} {{x}}");
    ASSERT_EQ(plan.points.size(), 8u);
    const SweepPoint& point = plan.points[3];  // lr 0.001, norm "it's", seed 2
    const std::string command = point_command(*plan.spec.command, point, "/tmp/S/runs/a b");
    EXPECT_EQ(command, "--lr '0.001' --norm 'it'\\''s' --seed '2' --out '/tmp/S/runs/a b' {x}");
    EXPECT_EQ(shell_words(command), "--lr\n0.001\n--norm\nit's\n--seed\n2\n--out\n/tmp/S/runs/a b\n{x}\n");
}

TEST(SweepCommand, PlanRoundTripsThroughItsJson) {
    const SweepPlan plan = command_plan("python t.py {user.lr} {user.norm}");
    const SweepPlan again = sweep_plan_from_json(sweep_plan_to_json(plan), "sweep.json");
    EXPECT_EQ(again.spec.command, plan.spec.command);
    ASSERT_EQ(again.points.size(), plan.points.size());
    EXPECT_EQ(again.points[5].id, plan.points[5].id);
    EXPECT_EQ(sweep_plan_to_json(plan).at("spec").contains("base"), false);
}

std::string refusal(const ojson& spec) {
    try {
        plan_sweep(sweep_spec_from_json(spec));
    } catch (const InputError& error) {
        return error.what();
    }
    return "";
}

TEST(SweepCommand, TemplatesAndAxesThatCannotRunAreRefusedByWhatToChange) {
    const ojson axes = {{"user.lr", {0.001}}};
    EXPECT_NE(
        refusal({{"command", "t --lr {user.lr} {seeds}"}, {"axes", axes}}).find("{seeds}, which is no axis"),
        std::string::npos);
    EXPECT_NE(refusal({{"command", "t"}, {"axes", axes}}).find("put {user.lr} where"), std::string::npos);
    EXPECT_NE(refusal({{"command", "t {user.lr"}, {"axes", axes}}).find("'{' without its '}'"),
              std::string::npos);
    EXPECT_NE(refusal({{"command", "t {user.lr}}"}, {"axes", axes}}).find("'}' without its '{'"),
              std::string::npos);
    EXPECT_NE(refusal({{"command", "t {train.lr}"}, {"axes", {{"train.lr", {0.001}}}}}).find("user.NAME"),
              std::string::npos);
    EXPECT_NE(refusal({{"command", "t {user.a-b}"}, {"axes", {{"user.a-b", {1}}}}}).find("user.NAME"),
              std::string::npos);
    EXPECT_NE(refusal({{"command", "t {user.lr}"}, {"axes", axes}, {"steps", 10}}).find("no \"steps\""),
              std::string::npos);
    EXPECT_NE(
        refusal({{"base", {{"preset", "quickstart"}}}, {"axes", axes}}).find("give the sweep a \"command\""),
        std::string::npos);
    EXPECT_NE(refusal({{"command", "  "}, {"axes", axes}}).find("the command line to run"),
              std::string::npos);
}

}  // namespace
}  // namespace normlab
