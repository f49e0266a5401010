// Runs a command sweep's point: a forked supervisor runs /bin/sh -c with the point's command in a
// process group of its own and stops the whole group (SIGTERM, once: the bridge ends the run "stopped")
// when this worker dies (PR_SET_PDEATHSIG) or on Ctrl-C, SIGTERM or a hang-up, and waits for it; the
// worker beats the point's claim, passes a stop on to the supervisor, and judges the end by the folder.
#include "app/cli/sweep_command_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/small_file.h"
#include "engine/sweep/sweep_command.h"

extern char** environ;

namespace normlab::cli {

namespace {
namespace fs = std::filesystem;

constexpr const char* kLogName = "command.log";
constexpr size_t kLogTailLines = 20;

// The signals that stop a point: the terminal's Ctrl-C and hang-up, and SIGTERM (kill, Slurm).
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The command's process group, for the supervisor's stop handler; a stop is passed on once (a second
// SIGTERM would cut the bridge's own exit handlers short).
volatile sig_atomic_t g_command_group = 0;
volatile sig_atomic_t g_group_stopped = 0;

void stop_command_group(int) {
    if (g_command_group > 0 && !g_group_stopped) {
        g_group_stopped = 1;
        kill(-g_command_group, SIGTERM);
    }
}

// The worker's: a stop asked for while its point's command runs.
volatile sig_atomic_t g_point_stop = 0;
void ask_point_stop(int) {
    g_point_stop = 1;
}

// How long the command's other processes may outlive its shell before the group is stopped (SIGTERM;
// sooner once a stop was asked for), and then before it is killed (SIGKILL).
constexpr auto kStragglerGrace = std::chrono::seconds(30);
constexpr auto kStopGrace = std::chrono::seconds(10);

// Reaps the supervisor's children until none is left: the shell's, and (as the child subreaper) every
// process the command started that its shell left behind (dash exits on SIGTERM at once while the
// script is still writing its run's last lines). Stragglers are stopped, then killed, after their grace.
void reap_descendants(pid_t group) {
    using clock = std::chrono::steady_clock;
    auto deadline = clock::now() + (g_group_stopped ? kStopGrace : kStragglerGrace);
    bool killed = false;
    for (;;) {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid < 0 && errno == ECHILD) return;
        if (pid > 0) continue;
        if (clock::now() >= deadline) {
            if (killed) return;  // what is left has left the group and ignores SIGKILL's: not ours to wait on
            if (!g_group_stopped) {
                g_group_stopped = 1;
                kill(-group, SIGTERM);
            } else {
                kill(-group, SIGKILL);
                killed = true;
            }
            deadline = clock::now() + kStopGrace;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

// Waits for the command's shell and for every process the command left, and leaves as the shell did:
// its exit code, or its signal raised again.
[[noreturn]] void leave_as(pid_t shell) {
    int status = 0;
    while (waitpid(shell, &status, 0) < 0 && errno == EINTR) {
    }
    reap_descendants(shell);
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    signal(WTERMSIG(status), SIG_DFL);
    raise(WTERMSIG(status));
    _exit(128 + WTERMSIG(status));
}

// The child's side, a supervisor: stopped with the worker (PR_SET_PDEATHSIG), it runs the command in
// a process group of its own, passes a stop to the whole group as SIGTERM and ends only when every
// process of the command has, so a shell that forks its commands (dash does) or a torchrun with
// workers leaves nothing behind to write into the folder. Never returns.
[[noreturn]] void supervise_command(const std::string& command, const std::string& folder, pid_t worker) {
    sigset_t stops, previous;
    sigemptyset(&stops);
    for (int stop : kStopSignals) sigaddset(&stops, stop);
    sigprocmask(SIG_BLOCK, &stops, &previous);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != worker) _exit(127);  // the worker died before the line above took effect
    prctl(PR_SET_CHILD_SUBREAPER, 1);     // the command's orphans come to this process, to be waited for
    const int log =
        open((fs::path(folder) / kLogName).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log >= 0) {
        dup2(log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
    }
    setenv("NORMLAB_RUN_DIR", folder.c_str(), 1);
    for (int stop : kStopSignals) signal(stop, stop_command_group);
    const pid_t shell = fork();
    if (shell == 0) {
        setpgid(0, 0);
        for (int stop : kStopSignals) signal(stop, SIG_DFL);
        sigprocmask(SIG_SETMASK, &previous, nullptr);
        execle("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr), environ);
        std::fprintf(stderr, "normlab-cli sweep: cannot run /bin/sh: %s\n", std::strerror(errno));
        _exit(127);
    }
    if (shell < 0) _exit(127);
    setpgid(shell, shell);
    g_command_group = shell;
    sigprocmask(SIG_SETMASK, &previous, nullptr);  // a stop that came meanwhile reaches the group now
    leave_as(shell);
}

// The last lines of the point's command.log.
std::string log_tail(const std::string& folder) {
    const std::optional<std::string> text =
        read_small_file_if_present((fs::path(folder) / kLogName).string(), 64ull << 20, "command log");
    if (!text || text->empty()) return "(it printed nothing)";
    size_t start = text->size(), lines = 0;
    while (start > 0 && lines <= kLogTailLines)
        if ((*text)[--start] == '\n' && start + 1 < text->size()) ++lines;
    return text->substr(start == 0 ? 0 : start + 1);
}

// summary.json of the folder, or an empty object when there is none (or it is unreadable).
nlohmann::json read_summary(const std::string& folder) {
    const std::optional<std::string> text = read_small_file_if_present(
        (fs::path(folder) / "summary.json").string(), kMaxJsonFileBytes, "summary");
    if (!text) return nlohmann::json::object();
    const std::optional<nlohmann::json> json = parse_json_or_nothing(*text);
    return json && json->is_object() ? *json : nlohmann::json::object();
}

// The point failed: its summary keeps what the run wrote, with status "failed" and the reason.
void mark_failed(const std::string& folder, const std::string& reason, const WriteFence& fence) {
    nlohmann::json summary = read_summary(folder);
    summary["status"] = "failed";
    summary["error"] = reason + "; the last lines of " + kLogName + ":\n" + log_tail(folder);
    if (!summary.contains("steps")) summary["steps"] = 0;
    write_file_atomically((fs::path(folder) / "summary.json").string(),
                          summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                          fence);
}

// Waits for the child, beating the claim; a stop asked for (g_point_stop) is passed on to it once and
// waited out; on a lost claim stops the child and rethrows.
int wait_beating(pid_t child, PointClaim& claim) {
    auto next_beat = std::chrono::steady_clock::now();
    int status = 0;
    bool stop_passed_on = false;
    for (;;) {
        const pid_t done = waitpid(child, &status, WNOHANG);
        if (done == child) return status;
        if (g_point_stop && !stop_passed_on) {
            kill(child, SIGTERM);
            stop_passed_on = true;
        }
        if (std::chrono::steady_clock::now() >= next_beat) {
            try {
                claim.heartbeat();
            } catch (const std::exception&) {
                kill(child, SIGTERM);
                waitpid(child, &status, 0);
                throw;
            }
            next_beat += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                std::chrono::duration<double>(claim.timing().beat_every));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

// Empties the point's folder (a killed attempt's run) and makes it again.
void fresh_folder(const std::string& folder, const WriteFence& fence) {
    check_fence(fence);
    std::error_code error;
    fs::remove_all(folder, error);
    fs::create_directories(folder, error);
    if (error) throw InputError("cannot make the point's folder " + folder + ": " + error.message());
}
}  // namespace

int run_command_point(const SweepPlan& plan, const SweepPoint& point, const std::string& folder, bool quiet,
                      PointClaim& claim) {
    const WriteFence fence = claim.fence();
    fresh_folder(folder, fence);
    const std::string command = point_command(*plan.spec.command, point, folder);
    write_file_atomically((fs::path(folder) / "command.txt").string(), command + "\n", fence);
    if (!quiet) std::cerr << "point " << point.id << ": " << command << "\n";
    const pid_t worker = getpid();
    std::cout.flush();
    std::cerr.flush();
    const pid_t child = fork();
    if (child < 0)
        throw ResourceError("cannot start the point's command: " + std::string(std::strerror(errno)));
    if (child == 0) supervise_command(command, folder, worker);
    // Ctrl-C, SIGTERM, a hang-up: stop the command and wait for it, so no command outlives its worker
    // to write into a folder the next `sweep run` empties
    for (int stop : kStopSignals) std::signal(stop, ask_point_stop);
    int status = 0;
    try {
        status = wait_beating(child, claim);
    } catch (...) {
        for (int stop : kStopSignals) std::signal(stop, SIG_DFL);
        throw;
    }
    for (int stop : kStopSignals) std::signal(stop, SIG_DFL);
    const std::string state = read_summary(folder).value("status", "");
    if (g_point_stop && state != "completed" && state != "diverged") {
        mark_failed(folder,
                    "stopped (Ctrl-C or SIGTERM) before it finished; run the sweep again to run it from the "
                    "start",
                    fence);
    } else if (WIFSIGNALED(status)) {
        mark_failed(folder, "the command was killed by signal " + std::to_string(WTERMSIG(status)), fence);
    } else if (WEXITSTATUS(status) != 0) {
        mark_failed(folder, "the command exited " + std::to_string(WEXITSTATUS(status)), fence);
    } else if (state.empty()) {
        mark_failed(folder,
                    "the command exited 0 but wrote no run here (does it call normlab.watch(model, "
                    "optimizer)? NORMLAB_RUN_DIR names this folder)",
                    fence);
    } else if (state == "running") {
        mark_failed(folder, "the command exited 0 with its run still \"running\" (call w.close())", fence);
    }
    if (!quiet) std::cerr << "point " << point.id << ": " << read_summary(folder).value("status", "") << "\n";
    return g_point_stop ? 130 : 0;
}

}  // namespace normlab::cli
