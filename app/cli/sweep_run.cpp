// sweep run / run-point. Each point runs in a child process of its own (posix_spawn of this program):
// a point that crashes or is killed costs only itself, and the unit of work is the same whether this
// machine, a Slurm array task or GNU parallel runs it.
#include "app/cli/sweep_run.h"

#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "app/cli/sweep_command_run.h"
#include "app/cli/sweep_edge.h"
#include "app/cli/train_loop.h"
#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/io/provenance.h"
#include "engine/sweep/sweep_folder.h"
#include "engine/sweep/sweep_path_policy.h"
#include "engine/sweep/sweep_paths.h"

extern char** environ;

namespace normlab::cli {

namespace {
namespace fs = std::filesystem;

volatile std::sig_atomic_t g_interrupted = 0;
void on_interrupt(int) {
    g_interrupted = 1;
}

const SweepPoint& find_point(const SweepPlan& plan, const std::string& wanted) {
    for (const SweepPoint& point : plan.points)
        if (point.id == wanted || std::to_string(point.index) == wanted) return point;
    throw InputError("--point " + wanted +
                     ": no point has that id or index (normlab-cli sweep status lists them)");
}

std::string point_line(const SweepPoint& point) {
    std::string labels;
    for (const std::string& label : point.labels) labels += (labels.empty() ? "" : " ") + label;
    return labels + " seed " + std::to_string(point.seed);
}

// Starts `normlab-cli sweep run-point ...` for one point; returns its pid.
pid_t spawn_point(const std::string& sweep_dir, const SweepPoint& point, int threads) {
    std::vector<std::string> args = {fs::read_symlink("/proc/self/exe").string(),
                                     "sweep",
                                     "run-point",
                                     sweep_dir,
                                     "--point",
                                     point.id,
                                     "--threads",
                                     std::to_string(threads),
                                     "--quiet"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int error = posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
    if (error != 0) throw ResourceError("cannot start a sweep worker: " + std::string(std::strerror(error)));
    return pid;
}

// Whether a worker's exit leaves its point failed: a finished point (completed, diverged) is a result
// however its worker ended; else killed, or an exit code other than 0 (done) and kClaimedElsewhere
// (another worker has it).
bool worker_failed(const PointProgress& progress, int status) {
    if (is_finished(progress.state)) return false;
    if (WIFSIGNALED(status) || progress.state == PointState::Failed) return true;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    return code != 0 && code != kClaimedElsewhere && !is_finished(progress.state);
}

// What became of a point whose worker exited with `status`.
std::string outcome_text(const PointProgress& progress, int status) {
    if (WIFEXITED(status) && WEXITSTATUS(status) == kClaimedElsewhere) return "claimed by another worker";
    if (worker_failed(progress, status) && progress.state != PointState::Failed) {
        if (WIFSIGNALED(status))
            return "failed: its worker was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
                   strsignal(WTERMSIG(status)) +
                   ") before it could record why; run the sweep again to run the point from the start";
        return "failed: its worker exited " + std::to_string(WEXITSTATUS(status)) +
               " before recording why (its message, if any, is above)";
    }
    std::string text = to_string(progress.state);
    if (!progress.error.empty()) text += ": " + progress.error;
    if (progress.summary && progress.summary->final_loss)
        text += ", final loss " + std::to_string(*progress.summary->final_loss);
    if (progress.summary && progress.summary->diverged_at)
        text += " at step " + std::to_string(*progress.summary->diverged_at);
    if (progress.summary && progress.summary->wall_seconds)
        text += " (" + std::to_string(static_cast<int>(*progress.summary->wall_seconds + 0.5)) + " s)";
    if (WIFSIGNALED(status)) text += " (worker killed by signal " + std::to_string(WTERMSIG(status)) + ")";
    return text;
}

// A point that failed before its run folder was started (a bad config, a missing text file): its
// summary.json says so, for `sweep status` and the next `sweep run`.
void record_failed_point(const std::string& folder, const std::string& reason, const WriteFence& fence) {
    const nlohmann::json summary = {{"status", "failed"}, {"steps", 0}, {"error", reason}};
    write_file_atomically(fs::path(folder) / "summary.json",
                          summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                          fence);
}

// Trains a claimed point into S/runs/<id>/, every file it replaces fenced by the claim.
int train_point(const std::string& dir, const SweepPlan& plan, const SweepPoint& point,
                std::optional<int64_t> threads, bool quiet, PointClaim& claim) {
    // Finished by another worker while this one waited for the claim: a result, not to be redone.
    if (const PointProgress progress = point_progress(dir, point); is_finished(progress.state)) {
        if (!quiet) std::cerr << "point " << point.id << " is already " << to_string(progress.state) << "\n";
        return 0;
    }
    const WriteFence fence = claim.fence();
    check_fence(fence);
    const std::string folder_path = real_sweep_folder(dir, "runs/" + point.id);
    if (plan.spec.command) return run_command_point(plan, point, folder_path, quiet, claim);
    std::unique_ptr<Trainer> trainer;
    try {
        Config config = point_config(plan, point);
        place_sweep_paths(config, plan, dir);
        if (threads) config.threads = static_cast<int>(*threads);
        validate(config);
        trainer = std::make_unique<Trainer>(config);
    } catch (const InputError& error) {
        record_failed_point(folder_path, error.what(), fence);
        throw;
    }
    RunFolder folder(folder_path, trainer->config(), true, fence);  // a killed attempt's files are replaced
    write_run_provenance(folder, *trainer, provenance_json(*trainer, std::nullopt));
    TrainLoopOptions loop;
    loop.quiet = quiet;
    loop.heartbeat_seconds = claim.timing().beat_every;
    loop.on_heartbeat = [&claim] { claim.heartbeat(); };
    PeriodicCheckpoint checkpoints = PeriodicCheckpoint::for_run(folder.path(), trainer->config(), fence);
    const nlohmann::json summary = train_into_folder(*trainer, folder, 0, loop, checkpoints);
    if (!quiet) std::cerr << "point " << point.id << ": " << summary.value("status", "") << "\n";
    return 0;
}

// A finished point's claim left by a worker of this host killed between finishing it and releasing
// the claim: taken over (at once: its process is gone) and released, so a finished sweep holds no
// claims. A claim of a live worker, or of another host's, is left to the usual take-over.
void release_dead_claims_of_finished_points(const std::string& dir, const SweepPlan& plan) {
    for (const SweepPoint& point : plan.points) {
        const std::optional<ClaimInfo> claim = PointClaim::read(dir, point.id);
        if (claim && claim->process_gone() && is_finished(point_progress(dir, point).state))
            PointClaim::acquire(dir, point.id);  // the hold goes at the end of this statement
    }
}

// The points of `plan` this worker still has to run: those of its shard not yet finished.
std::vector<PointJob> points_to_run(const std::string& dir, const SweepPlan& plan,
                                    const std::optional<Shard>& shard) {
    std::vector<PointJob> todo;
    for (const SweepPoint& point : plan.points)
        if ((!shard || shard->holds(point.index)) && !is_finished(point_progress(dir, point).state))
            todo.push_back({dir, point});
    return todo;
}
}  // namespace

int64_t usable_cores() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

bool sweep_interrupted() {
    return g_interrupted != 0;
}

int run_point_jobs(const std::vector<PointJob>& todo, const SweepRunOptions& options) {
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
    std::map<pid_t, const PointJob*> running;
    size_t next = 0, finished = 0;
    int failed = 0;
    // Points of several sweep folders (an edge search's) are named with their folder.
    const bool several =
        std::any_of(todo.begin(), todo.end(), [&](const PointJob& job) { return job.dir != todo[0].dir; });
    bool stop_passed_on = false;
    while ((next < todo.size() && !g_interrupted) || !running.empty()) {
        while (!g_interrupted && next < todo.size() && static_cast<int64_t>(running.size()) < options.jobs) {
            const PointJob& job = todo[next++];
            running[spawn_point(job.dir, job.point, static_cast<int>(options.threads))] = &job;
        }
        if (g_interrupted && !stop_passed_on) {  // stop the running points too (a kill of this process
            for (const auto& [pid, job] : running) kill(pid, SIGTERM);  // alone reaches only it), once
            stop_passed_on = true;
        }
        int status = 0;
        // polled, so a stop asked for meanwhile is passed on at once (signal() restarts a blocking wait)
        const pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            continue;
        }
        const PointJob* job = running[pid];
        running.erase(pid);
        ++finished;
        const PointProgress progress = point_progress(job->dir, job->point);
        const std::string outcome = outcome_text(progress, status);
        failed += worker_failed(progress, status);
        if (!options.quiet)
            std::fprintf(stderr, "[%zu/%zu] %s%s (%s): %s\n", finished, todo.size(),
                         several ? (fs::path(job->dir).filename().string() + "/").c_str() : "",
                         job->point.id.c_str(), point_line(job->point).c_str(), outcome.c_str());
    }
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    return failed;
}

int run_one_point(ArgReader& reader) {
    if (reader.done()) throw InputError("name the sweep folder: normlab-cli sweep run-point S --point ID");
    const std::string dir = reader.take();
    std::string wanted;
    std::optional<int64_t> threads;
    bool quiet = false;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--point")
            wanted = reader.value_of(flag);
        else if (flag == "--threads")
            threads = reader.integer_of(flag, 0, 1024);
        else if (flag == "--quiet")
            quiet = true;
        else
            throw InputError("unknown option '" + flag + "'; see normlab-cli sweep --help");
    }
    if (wanted.empty()) throw InputError("--point ID|INDEX is required");
    const SweepPlan plan = load_sweep(dir);
    const SweepPoint& point = find_point(plan, wanted);
    if (const PointProgress progress = point_progress(dir, point); is_finished(progress.state)) {
        if (!quiet) std::cerr << "point " << point.id << " is already " << to_string(progress.state) << "\n";
        return 0;
    }
    std::optional<PointClaim> claim = PointClaim::acquire(dir, point.id);
    if (!claim) {
        if (!quiet) std::cerr << "point " << point.id << " is being run by another worker\n";
        return kClaimedElsewhere;
    }
    try {
        return train_point(dir, plan, point, threads, quiet, *claim);
    } catch (const std::exception&) {
        try {
            claim->check();
        } catch (const WriteFenceLost& lost) {  // whatever stopped it, the point is another worker's now
            std::cerr << "point " << point.id << ": " << lost.what() << "\n";
            return kClaimedElsewhere;
        }
        throw;
    }
}

bool SweepRunOptions::consume(const std::string& flag, ArgReader& reader) {
    if (flag == "--jobs")
        jobs = reader.integer_of(flag, 1, 256);
    else if (flag == "--threads-per-job")
        threads = reader.integer_of(flag, 0, 1024);
    else if (flag == "--quiet")
        quiet = true;
    else
        return false;
    return true;
}

int run_points(ArgReader& reader) {
    if (reader.done()) throw InputError("name the sweep folder: normlab-cli sweep run S");
    const std::string dir = reader.take();
    SweepRunOptions options;
    std::optional<Shard> shard = shard_from_slurm();
    bool shard_given = false;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--shard")
            shard = parse_shard(reader.value_of(flag)), shard_given = true;
        else if (!options.consume(flag, reader))
            throw InputError("unknown option '" + flag + "'; see normlab-cli sweep --help");
    }
    if (is_edge_folder(dir)) {  // its rounds depend on each other: workers share probes by claims instead
        if (shard_given)
            throw InputError(
                "--shard: an edge search is not sharded; start any number of `normlab-cli sweep "
                "run " +
                dir + "` workers and their claims share its probes");
        return continue_edge_search(dir, options);
    }
    const SweepPlan plan = load_sweep(dir);
    for (const char* folder : {"claims", "runs"})  // every worker would refuse: say so once
        if (const std::optional<std::string> problem = sweep_folder_problem(dir, folder))
            throw InputError(*problem);
    release_dead_claims_of_finished_points(dir, plan);
    const std::vector<PointJob> todo = points_to_run(dir, plan, shard);
    if (!options.quiet)
        std::cerr << "normlab-cli sweep run: " << todo.size() << " of " << plan.points.size()
                  << " points to run"
                  << (shard ? " (shard " + std::to_string(shard->index) + "/" + std::to_string(shard->count) +
                                  ")"
                            : "")
                  << ", " << options.jobs << " at a time, " << options.threads << " thread(s) each\n";
    const int failed = run_point_jobs(todo, options);
    // again at the end: a worker killed just before this run started may have been still dying then
    // (its process not yet gone), its finished point's claim left behind
    release_dead_claims_of_finished_points(dir, plan);
    if (g_interrupted) {
        std::cerr << "normlab-cli sweep run: interrupted; run the same command again to finish the sweep\n";
        return 130;
    }
    if (failed > 0) {
        std::cerr << "normlab-cli sweep run: " << failed
                  << " point(s) failed (the lines above say why, and the summary.json of those that could "
                     "record it); run the same command again to retry them\n";
        return 1;
    }
    return 0;
}

}  // namespace normlab::cli
