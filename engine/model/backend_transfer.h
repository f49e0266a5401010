// Moves buffers from one backend's memory to another's all-or-nothing: every copy is made on the
// target first, and only commit() releases the originals and repoints the owners' pointers. A transfer
// dropped before commit() (an allocation on the target failed) releases its copies: nothing changed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/backend/backend.h"

namespace normlab {

class BackendTransfer {
  public:
    BackendTransfer(Backend& from, Backend& to) : m_from(from), m_to(to) {}
    ~BackendTransfer();
    BackendTransfer(const BackendTransfer&) = delete;
    BackendTransfer& operator=(const BackendTransfer&) = delete;

    Backend& target() { return m_to; }

    // Copies `count` floats of `buffer` (a null buffer stays null); commit() repoints `buffer`.
    void copy(float*& buffer, size_t count);
    // A fresh int buffer of `count` on the target whose contents are not kept (inputs that every
    // forward pass uploads again); commit() repoints `buffer`.
    void reallocate(int32_t*& buffer, size_t count);

    // Releases the originals on the source backend and points every owner at its copy. Never throws.
    void commit();

  private:
    template <class T>
    struct Staged {
        T** owner;
        T* copy;
    };

    Backend& m_from;
    Backend& m_to;
    std::vector<Staged<float>> m_floats;
    std::vector<Staged<int32_t>> m_ints;
    bool m_committed = false;
};

}  // namespace normlab
