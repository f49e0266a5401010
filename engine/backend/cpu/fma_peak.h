// The CPU's floating-point peak as `normlab-cli bench --peak` measures it, in the same process as the
// steps it is compared with: every thread runs independent fused multiply-add chains in the widest vectors
// this CPU has (chosen at run time, whatever the build's flags), so no latency or memory limits it.
#pragma once
#include <string>

namespace normlab {

struct FmaPeak {
    double gflops;             // all threads together (2 FLOPs per lane per FMA)
    std::string instructions;  // "AVX-512", "AVX2 + FMA" or "SSE" (multiply and add)
    int threads;
};

FmaPeak measure_fma_peak(int threads, double seconds = 0.5);

}  // namespace normlab
