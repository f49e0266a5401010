// NORMLAB_HOST_DEVICE marks maths that both the CPU ops and the CUDA kernels call: __host__ __device__
// when nvcc compiles the file, nothing for the host compiler. One definition of each formula serves
// both backends, so they cannot drift apart.
#pragma once

#if defined(__CUDACC__)
#define NORMLAB_HOST_DEVICE __host__ __device__
#else
#define NORMLAB_HOST_DEVICE
#endif
