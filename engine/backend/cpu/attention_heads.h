// Where one (batch, head) pair of causal attention reads q, k, v inside the packed qkv rows and writes
// its output columns: shared by the reference and the fast attention ops.
#pragma once
#include <cstddef>

#include "engine/backend/cpu/eigen_maps.h"

namespace normlab {

// Where one (batch, head) pair's q, k, v columns start inside packed qkv rows (row stride 3d), and
// its output columns inside out rows (row stride d).
struct HeadOffsets {
    size_t q, k, v, out;
    int seq, head_dim, d;

    HeadOffsets(int pair, int seq_len, int heads, int dim) : seq(seq_len), head_dim(dim), d(heads * dim) {
        const size_t row0 = static_cast<size_t>(pair / heads) * seq_len;
        const size_t column = static_cast<size_t>(pair % heads) * dim;
        q = row0 * 3 * d + column;
        k = q + d;
        v = q + 2 * static_cast<size_t>(d);
        out = row0 * d + column;
    }
    template <class View, class Pointer>
    View packed(Pointer base, size_t offset) const {
        return View(base + offset, seq, head_dim, Eigen::OuterStride<>(3 * d));
    }
    template <class View, class Pointer>
    View output(Pointer base) const {
        return View(base + out, seq, head_dim, Eigen::OuterStride<>(d));
    }
};

}  // namespace normlab
