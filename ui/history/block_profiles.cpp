// Bounded per-block profiles over a run's steps (block_profiles.h).
#include "ui/history/block_profiles.h"

#include <algorithm>

namespace normlab::ui {

void BlockProfiles::absorb(int64_t step, const std::vector<normlab::LayerTelemetry>& layers) {
    BlockProfile profile{step, {}};
    profile.blocks.reserve(layers.size());
    for (const normlab::LayerTelemetry& layer : layers)
        profile.blocks.push_back(
            {layer.grad.w_qkv, layer.grad.w_o, layer.grad.w_1, layer.grad.w_2, layer.resid});
    if (m_first.blocks.empty()) m_first = profile;
    if (step % m_spacing == 0 && (m_kept.empty() || m_kept.back().step < step)) {
        m_kept.push_back(profile);
        if (m_kept.size() > kCapacity) {
            m_spacing *= 2;
            std::erase_if(m_kept, [this](const BlockProfile& kept) { return kept.step % m_spacing != 0; });
        }
    }
    m_latest = std::move(profile);
}

void BlockProfiles::clear() {
    *this = BlockProfiles();
}

const BlockProfile& BlockProfiles::atOrBefore(int64_t step) const {
    if (step >= m_latest.step) return m_latest;
    const BlockProfile* best = &m_first;
    // The last kept profile at or before `step` (kept steps ascend).
    const auto after =
        std::upper_bound(m_kept.begin(), m_kept.end(), step,
                         [](int64_t wanted, const BlockProfile& kept) { return wanted < kept.step; });
    if (after != m_kept.begin() && std::prev(after)->step > best->step) best = &*std::prev(after);
    return *best;
}

}  // namespace normlab::ui
