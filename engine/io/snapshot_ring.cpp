// SnapshotRing: a deque of (step, checkpoint bytes) trimmed to the count and byte budget.
#include "engine/io/snapshot_ring.h"

#include <algorithm>

#include "engine/io/checkpoint.h"
#include "engine/train/trainer.h"

namespace normlab {

void SnapshotRing::set_settings(SnapshotSettings settings) {
    m_settings = settings;
    trim();
}

void SnapshotRing::after_step(Trainer& trainer) {
    const int64_t step = trainer.steps_done();
    if (m_settings.every <= 0 || m_settings.keep <= 0 || step % m_settings.every != 0) return;
    // A diverged step's state is not that step's (its update was never applied); a state larger than
    // the whole budget would be thrown away at once, so it is not made (its size is known from the last).
    if (trainer.status() == RunStatus::Diverged || m_last_size > m_settings.max_bytes) return;
    // The oldest point that the new one will push out lends it its storage (no fresh allocation's page
    // faults: a medium model's state is 78 MB). If the copy throws, that point is gone a little early.
    std::string reuse;
    const bool full = m_points.size() >= static_cast<size_t>(m_settings.keep) ||
                      (!m_points.empty() && m_bytes + m_last_size > m_settings.max_bytes);
    if (full) {
        reuse = std::move(m_points.front().second);
        m_bytes -= reuse.size();
        m_points.pop_front();
    }
    std::string bytes = checkpoint_bytes(trainer, std::move(reuse));
    m_last_size = bytes.size();
    keep(step, std::move(bytes));
}

void SnapshotRing::keep(int64_t step, std::string bytes) {
    // A step taken again (a restarted run) replaces what was kept from it and after it.
    while (!m_points.empty() && m_points.back().first >= step) {
        m_bytes -= m_points.back().second.size();
        m_points.pop_back();
    }
    m_bytes += bytes.size();
    m_points.emplace_back(step, std::move(bytes));
    trim();
}

void SnapshotRing::trim() {
    const auto over = [this] {
        return m_points.size() > static_cast<size_t>(std::max(m_settings.keep, 0)) ||
               (m_bytes > m_settings.max_bytes && !m_points.empty());
    };
    while (!m_points.empty() && over()) {
        m_bytes -= m_points.front().second.size();
        m_points.pop_front();
    }
}

std::optional<SnapshotRing::Point> SnapshotRing::at_or_before(int64_t step) const {
    for (auto it = m_points.rbegin(); it != m_points.rend(); ++it)
        if (it->first <= step) return Point{it->first, &it->second};
    return std::nullopt;
}

std::vector<int64_t> SnapshotRing::steps() const {
    std::vector<int64_t> steps;
    for (const auto& point : m_points) steps.push_back(point.first);
    return steps;
}

}  // namespace normlab
