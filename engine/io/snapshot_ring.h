// Fork points of a live run: every N-th step its whole state (checkpoint_bytes: weights, optimizer
// moments, step and schedule position; the batches follow from the step) kept in memory, the newest K
// within a byte budget, so a run can be forked at an earlier step without writing checkpoints to disk.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace normlab {

class Trainer;

struct SnapshotSettings {
    int64_t every = 25;                    // a fork point every this many steps (0: none)
    int keep = 20;                         // the newest this many
    size_t max_bytes = size_t{512} << 20;  // and no more bytes than this (the oldest go first)
};

class SnapshotRing {
  public:
    explicit SnapshotRing(SnapshotSettings settings = {}) : m_settings(settings) {}
    // Drops what the new limits do not keep (a larger budget lets copies be made again).
    void set_settings(SnapshotSettings settings);
    // After a step: keeps the trainer's state when its step is a multiple of `every`.
    void after_step(Trainer& trainer);
    // Keeps `bytes` as the state at `step` (after_step's second half; tests).
    void keep(int64_t step, std::string bytes);
    struct Point {
        int64_t step = 0;
        const std::string* bytes = nullptr;
    };
    // The newest fork point at or before `step`, if any.
    std::optional<Point> at_or_before(int64_t step) const;
    std::vector<int64_t> steps() const;
    size_t bytes() const { return m_bytes; }

  private:
    void trim();
    SnapshotSettings m_settings;
    size_t m_last_size = 0;  // the last state's bytes: one over the budget stops further copies
    std::deque<std::pair<int64_t, std::string>> m_points;  // by step, oldest first
    size_t m_bytes = 0;
};

}  // namespace normlab
