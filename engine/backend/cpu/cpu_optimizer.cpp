// Optimizer updates on the CPU: SGD with momentum, Adam (L2 decay), AdamW (decoupled decay) and RAdam.
// The update is written to `update` (for the update/parameter telemetry) and then added to the parameter.
#include "engine/backend/cpu/cpu_kernels.h"
#include "engine/backend/cpu/cpu_reference_backend.h"

namespace normlab {

void CpuReferenceBackend::optimizer_update(const OptimizerStep& step, float* param, const float* grad,
                                           float* m, float* v, float* update, size_t count) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < count; ++i) {
        update[i] = optimizer_delta(step, param[i], grad[i], m[i], v[i]);
        param[i] += update[i];
    }
}

}  // namespace normlab
