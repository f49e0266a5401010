// Helpers the CUDA kernels share: launch geometry, deterministic warp and block reductions (fixed
// shapes, fixed order: the same inputs give the same bits), reading a ScaleRef on the device, and the
// carving of one workspace request into typed pieces.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "engine/backend/backend.h"

namespace normlab::cuda {

inline constexpr int kThreads = 256;           // threads per block of element-wise and reduction kernels
inline constexpr int kWarp = 32;               // lanes per warp
inline constexpr int kRowsPerBlock = 8;        // warp-per-row kernels: 8 rows (warps) per block
inline constexpr unsigned kMaxBlocks = 65535;  // cap of grid-stride grids
inline constexpr unsigned kFullMask = 0xffffffffu;

// Blocks of a grid-stride loop over `count` items (a function of count alone, so reductions that keep
// one partial per block stay deterministic).
inline unsigned grid_for(size_t count, unsigned cap = kMaxBlocks) {
    const size_t blocks = (count + kThreads - 1) / kThreads;
    return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > cap ? cap : blocks));
}

// Blocks of a warp-per-row kernel over `rows` rows.
inline unsigned row_blocks(size_t rows) {
    return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

// The value of a scale that is a constant or a learnable scalar in device memory.
__device__ inline float scale_value(ScaleRef ref) {
    return ref.param ? *ref.param : ref.constant;
}

// Butterfly sum over the warp: every lane gets the same bits (each step adds a commutative pair).
template <class T>
__device__ inline T warp_sum(T value) {
    for (int offset = kWarp / 2; offset > 0; offset >>= 1) value += __shfl_xor_sync(kFullMask, value, offset);
    return value;
}

__device__ inline float warp_max(float value) {
    for (int offset = kWarp / 2; offset > 0; offset >>= 1)
        value = fmaxf(value, __shfl_xor_sync(kFullMask, value, offset));
    return value;
}

// Sum over the block (every thread must call it); `shared` holds kWarp values. Every thread gets the total.
template <class T>
__device__ inline T block_sum(T value, T* shared) {
    const int lane = threadIdx.x % kWarp;
    const int warp = threadIdx.x / kWarp;
    const int warps = (blockDim.x + kWarp - 1) / kWarp;
    value = warp_sum(value);
    __syncthreads();  // an earlier call may still be reading shared[0]
    if (lane == 0) shared[warp] = value;
    __syncthreads();
    T total = threadIdx.x < warps ? shared[threadIdx.x] : T(0);
    if (warp == 0) total = warp_sum(total);
    if (threadIdx.x == 0) shared[0] = total;
    __syncthreads();
    return shared[0];
}

// The same for the maximum of floats.
__device__ inline float block_max(float value, float* shared) {
    const int lane = threadIdx.x % kWarp;
    const int warp = threadIdx.x / kWarp;
    const int warps = (blockDim.x + kWarp - 1) / kWarp;
    value = warp_max(value);
    __syncthreads();
    if (lane == 0) shared[warp] = value;
    __syncthreads();
    float total = threadIdx.x < warps ? shared[threadIdx.x] : -INFINITY;
    if (warp == 0) total = warp_max(total);
    if (threadIdx.x == 0) shared[0] = total;
    __syncthreads();
    return shared[0];
}

// One workspace request carved into typed pieces, each 256-byte aligned:
//   WorkspaceLayout layout; auto a = layout.reserve<float>(n); ...; void* base = workspace(layout.bytes());
//   float* pa = layout.at<float>(base, a);
class WorkspaceLayout {
  public:
    template <class T>
    size_t reserve(size_t count) {
        const size_t offset = (m_bytes + 255) / 256 * 256;
        m_bytes = offset + count * sizeof(T);
        return offset;
    }
    size_t bytes() const { return m_bytes; }
    template <class T>
    static T* at(void* base, size_t offset) {
        return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
    }

  private:
    size_t m_bytes = 0;
};

}  // namespace normlab::cuda
