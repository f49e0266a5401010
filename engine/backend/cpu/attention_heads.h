// Where one (batch, head) pair of multi-head attention reads q, k, v (each from its own strided rows,
// see AttentionInputs) and writes its output columns: shared by the reference and the fast attention ops.
#pragma once
#include <cstddef>

#include "engine/backend/backend.h"
#include "engine/backend/cpu/eigen_maps.h"

namespace normlab {

// Strided [seq, head_dim] views of one (batch, head) pair: its rows start at batch row row0 and its
// columns at head * head_dim inside every source (q, k, v, out or their gradients).
struct AttentionHead {
    size_t row0, column;
    int seq, head_dim, d;

    AttentionHead(int pair, const AttentionShape& shape)
        : row0(static_cast<size_t>(pair / shape.heads) * shape.seq),
          column(static_cast<size_t>(pair % shape.heads) * shape.head_dim),
          seq(shape.seq),
          head_dim(shape.head_dim),
          d(shape.heads * shape.head_dim) {}

    template <class View, class Pointer>
    View rows(Pointer base, int stride) const {
        return View(base + row0 * stride + column, seq, head_dim, Eigen::OuterStride<>(stride));
    }
    template <class View, class Pointer>
    View output(Pointer base) const {
        return rows<View>(base, d);
    }
};

}  // namespace normlab
