// TaskPool: one 64-bit claim word holds (generation, first unclaimed task, end of the unclaimed ones).
// The caller claims from the front and the workers from the back, each with a compare-exchange on that
// word, so a worker only runs tasks of the run it read, and with two threads each keeps claiming the same
// half of an op's rows from one op to the next (those rows stay in its core's cache). The caller cannot
// start the next run (and overwrite the function) before every claimed task has completed.
#include "engine/backend/cpu/cpu_task_pool.h"

#include <immintrin.h>

namespace normlab {

namespace {
constexpr int kSpinsBeforeSleep = 20000;  // a few hundred microseconds of pause instructions
thread_local int t_slot = 0;

uint32_t generation_of(uint64_t claim) {
    return static_cast<uint32_t>(claim >> 32);
}
int first_of(uint64_t claim) {
    return static_cast<int>((claim >> 16) & 0xffffu);
}
int end_of(uint64_t claim) {
    return static_cast<int>(claim & 0xffffu);
}
}  // namespace

TaskPool::TaskPool(int threads) {
    for (int slot = 1; slot < threads; ++slot) m_workers.emplace_back([this, slot] { worker_loop(slot); });
}

TaskPool::~TaskPool() {
    m_stop.store(true);
    m_claim.fetch_add(uint64_t{1} << 32);
    m_claim.notify_all();
    for (std::thread& worker : m_workers) worker.join();
}

int TaskPool::slot() {
    return t_slot;
}

void TaskPool::work(uint32_t generation, bool from_back) {
    const uint64_t first = uint64_t{1} << 16;  // one step of the first-unclaimed field
    uint64_t claim = m_claim.load(std::memory_order_acquire);
    int done = 0;  // reported once, when nothing is left to claim: one shared update per thread and run
    while (generation_of(claim) == generation && first_of(claim) < end_of(claim)) {
        const uint64_t claimed = from_back ? claim - 1 : claim + first;
        if (!m_claim.compare_exchange_weak(claim, claimed, std::memory_order_acq_rel)) continue;
        m_function(m_context, from_back ? end_of(claimed) : first_of(claim));
        ++done;
        claim = m_claim.load(std::memory_order_acquire);
    }
    if (done == 0) return;
    // m_tasks is read before the report: once the last task is reported the caller may start the next run
    // and write it (ThreadSanitizer found this read after the fetch_add racing with that write).
    const int tasks = m_tasks;
    if (m_completed.fetch_add(done, std::memory_order_acq_rel) + done == tasks) m_completed.notify_one();
}

void TaskPool::run_erased(int tasks, Function function, void* context) {
    m_function = function;
    m_context = context;
    m_tasks = tasks;
    m_completed.store(0, std::memory_order_relaxed);
    const uint32_t generation = generation_of(m_claim.load(std::memory_order_relaxed)) + 1;
    m_claim.store((static_cast<uint64_t>(generation) << 32) | static_cast<uint64_t>(tasks),
                  std::memory_order_release);
    m_claim.notify_all();
    work(generation, false);
    int spins = 0;
    for (int done = m_completed.load(std::memory_order_acquire); done < tasks;
         done = m_completed.load(std::memory_order_acquire)) {
        if (++spins < kSpinsBeforeSleep) {
            _mm_pause();
        } else {
            m_completed.wait(done, std::memory_order_acquire);
        }
    }
}

void TaskPool::worker_loop(int slot) {
    t_slot = slot;
    uint32_t seen = 0;
    while (true) {
        uint64_t claim = m_claim.load(std::memory_order_acquire);
        for (int spins = 0; generation_of(claim) == seen; claim = m_claim.load(std::memory_order_acquire)) {
            if (++spins < kSpinsBeforeSleep) {
                _mm_pause();
            } else {
                m_claim.wait(claim, std::memory_order_acquire);
            }
        }
        if (m_stop.load(std::memory_order_acquire)) return;
        seen = generation_of(claim);
        work(seen, true);
    }
}

}  // namespace normlab
