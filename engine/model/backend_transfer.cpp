// BackendTransfer: copies go through host memory (download, allocate on the target, upload), so any
// two backends can exchange buffers; the source keeps its buffers until the whole transfer succeeded.
#include "engine/model/backend_transfer.h"

namespace normlab {

BackendTransfer::~BackendTransfer() {
    if (m_committed) return;
    for (const auto& staged : m_floats) m_to.release(staged.copy);
    for (const auto& staged : m_ints) m_to.release(staged.copy);
}

void BackendTransfer::copy(float*& buffer, size_t count) {
    if (!buffer) return;
    std::vector<float> host(count);
    m_from.download(host.data(), buffer, count);
    m_floats.push_back({&buffer, nullptr});  // recorded first: a failed allocation leaves nothing behind
    m_floats.back().copy = m_to.allocate(count);
    m_to.upload(m_floats.back().copy, host.data(), count);
}

void BackendTransfer::reallocate(int32_t*& buffer, size_t count) {
    if (!buffer) return;
    m_ints.push_back({&buffer, nullptr});
    m_ints.back().copy = m_to.allocate_ints(count);
}

void BackendTransfer::commit() {
    for (const auto& staged : m_floats) {
        m_from.release(*staged.owner);
        *staged.owner = staged.copy;
    }
    for (const auto& staged : m_ints) {
        m_from.release(*staged.owner);
        *staged.owner = staged.copy;
    }
    m_committed = true;
}

}  // namespace normlab
