// Runs a command sweep's point: a forked supervisor runs /bin/sh -c with the point's command in a
// process group of its own and stops the whole group when this worker dies (PR_SET_PDEATHSIG, SIGTERM:
// the bridge ends the run "stopped"); the worker beats the point's claim and judges the end by the folder.
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

#include "engine/core/errors.h"
#include "engine/io/atomic_file.h"
#include "engine/io/json_read.h"
#include "engine/io/small_file.h"
#include "engine/sweep/sweep_command.h"

extern char** environ;

namespace normlab::cli {

namespace {
namespace fs = std::filesystem;

constexpr const char* kLogName = "command.log";
constexpr size_t kLogTailLines = 20;

// The command's process group, for the supervisor's SIGTERM handler.
volatile sig_atomic_t g_command_group = 0;

void stop_command_group(int) {
    if (g_command_group > 0) kill(-g_command_group, SIGTERM);
}

// Waits for the command's shell and leaves as it did: its exit code, or its signal raised again.
[[noreturn]] void leave_as(pid_t shell) {
    int status = 0;
    while (waitpid(shell, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    signal(WTERMSIG(status), SIG_DFL);
    raise(WTERMSIG(status));
    _exit(128 + WTERMSIG(status));
}

// The child's side, a supervisor: stopped with the worker (PR_SET_PDEATHSIG), it runs the command in
// a process group of its own and passes a SIGTERM to the whole group, so a shell that forks its
// commands (dash does) or a torchrun with workers leaves nothing behind. Never returns.
[[noreturn]] void supervise_command(const std::string& command, const std::string& folder, pid_t worker) {
    sigset_t term, previous;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &previous);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != worker) _exit(127);  // the worker died before the line above took effect
    const int log =
        open((fs::path(folder) / kLogName).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log >= 0) {
        dup2(log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
    }
    setenv("NORMLAB_RUN_DIR", folder.c_str(), 1);
    signal(SIGTERM, stop_command_group);
    const pid_t shell = fork();
    if (shell == 0) {
        setpgid(0, 0);
        signal(SIGTERM, SIG_DFL);
        sigprocmask(SIG_SETMASK, &previous, nullptr);
        execle("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr), environ);
        std::fprintf(stderr, "normlab-cli sweep: cannot run /bin/sh: %s\n", std::strerror(errno));
        _exit(127);
    }
    if (shell < 0) _exit(127);
    setpgid(shell, shell);
    g_command_group = shell;
    sigprocmask(SIG_SETMASK, &previous, nullptr);  // a SIGTERM that came meanwhile reaches the group now
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

// Waits for the child, beating the claim; on a lost claim stops the child and rethrows.
int wait_beating(pid_t child, PointClaim& claim) {
    auto next_beat = std::chrono::steady_clock::now();
    int status = 0;
    for (;;) {
        const pid_t done = waitpid(child, &status, WNOHANG);
        if (done == child) return status;
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
    const int status = wait_beating(child, claim);
    const std::string state = read_summary(folder).value("status", "");
    if (WIFSIGNALED(status)) {
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
    return 0;
}

}  // namespace normlab::cli
