// Where the CUDA attention keeps q, k, v: head-major [parts][batch * heads][seq][head_dim] copies of the
// packed rows [n, parts * d] (q | k | v, heads contiguous inside each). Host and device code, so the
// host tests check the index against the CPU's HeadOffsets (tests/engine/test_cuda_plans.cpp).
#pragma once
#include <cstddef>

#include "engine/core/host_device.h"

namespace normlab {

// The shape of one attention call.
struct HeadShape {
    int batch, seq, heads, head_dim;
    NORMLAB_HOST_DEVICE int d() const { return heads * head_dim; }
    NORMLAB_HOST_DEVICE int pairs() const { return batch * heads; }
    NORMLAB_HOST_DEVICE size_t rows() const { return static_cast<size_t>(batch) * seq; }  // n
    NORMLAB_HOST_DEVICE size_t head_elements() const { return rows() * d(); }  // n d = pairs seq hd
};

// Where element i of packed rows [n, parts * d] (part p, head h at columns p d + h hd .. + hd) sits in
// head-major [parts][batch * heads][seq][head_dim].
NORMLAB_HOST_DEVICE inline size_t head_major_index(size_t i, int parts, const HeadShape& shape) {
    const int d = shape.d();
    const size_t width = static_cast<size_t>(parts) * d;
    const size_t row = i / width;
    const int column = static_cast<int>(i % width);
    const size_t part = column / d;
    const int head = (column % d) / shape.head_dim;
    const int element = column % shape.head_dim;
    const size_t pair = (row / shape.seq) * shape.heads + head;  // b heads + h
    const size_t t = row % shape.seq;
    return ((part * shape.pairs() + pair) * shape.seq + t) * shape.head_dim + element;
}

}  // namespace normlab
