// The fast CPU backend's own worker threads. The caller claims an op's tasks one at a time from the
// front and the workers from the back (so each keeps the same rows from op to op, in its own cache);
// the caller waits only for tasks already claimed, never for a worker to wake up: a descheduled worker
// (busy GUI thread, another process) costs nothing. Idle workers spin briefly, then sleep on a futex.
#pragma once
#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

namespace normlab {

class TaskPool {
  public:
    explicit TaskPool(int threads);  // threads - 1 workers; the caller is the other one
    ~TaskPool();
    TaskPool(const TaskPool&) = delete;
    TaskPool& operator=(const TaskPool&) = delete;

    int threads() const { return static_cast<int>(m_workers.size()) + 1; }

    // Runs body(task) for every task in [0, tasks) (at most kMaxTasks) and returns when all have
    // finished. One task or one thread: on the caller alone. Not reentrant, one caller at a time.
    template <class Body>
    void run(int tasks, Body&& body) {
        if (tasks <= 1 || m_workers.empty()) {
            for (int task = 0; task < tasks; ++task) body(task);
            return;
        }
        run_erased(
            tasks,
            [](void* context, int task) { (*static_cast<std::remove_reference_t<Body>*>(context))(task); },
            const_cast<void*>(static_cast<const void*>(&body)));
    }

    // Which thread of its pool runs the calling code: 0 for the caller of run, 1.. for the workers.
    static int slot();

    static constexpr int kMaxTasks = 0xffff;

  private:
    using Function = void (*)(void*, int);
    void run_erased(int tasks, Function function, void* context);
    // Claims (from the front for the caller, the back for workers) and runs tasks of `generation`
    // while there are any.
    void work(uint32_t generation, bool from_back);
    void worker_loop(int slot);

    // (generation << 32) | (first unclaimed task << 16) | end of the unclaimed tasks; generation changes
    // with every run.
    std::atomic<uint64_t> m_claim{0};
    std::atomic<int> m_completed{0};
    int m_tasks = 0;  // of the current run, set before it is published
    std::atomic<bool> m_stop{false};
    Function m_function = nullptr;
    void* m_context = nullptr;
    std::vector<std::thread> m_workers;
};

}  // namespace normlab
