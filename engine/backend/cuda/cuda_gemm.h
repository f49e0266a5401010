// Runs a GemmPlan (gemm_plans.h) with cuBLAS in fp32: one cublasSgemm, or one strided-batched call over
// `batch` matrices. The plans hold every transpose and leading dimension; this only passes them on.
#pragma once
#include <cublas_v2.h>

#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/gemm_plans.h"

namespace normlab {

inline void run_gemm(cublasHandle_t handle, const GemmPlan& plan, float alpha, const float* a, const float* b,
                     float beta, float* c, int batch = 1) {
    const cublasOperation_t op_a = plan.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = plan.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (batch == 1) {
        NORMLAB_CUBLAS_CHECK(cublasSgemm(handle, op_a, op_b, plan.m, plan.n, plan.k, &alpha, a, plan.lda, b,
                                         plan.ldb, &beta, c, plan.ldc));
        return;
    }
    NORMLAB_CUBLAS_CHECK(cublasSgemmStridedBatched(handle, op_a, op_b, plan.m, plan.n, plan.k, &alpha, a,
                                                   plan.lda, plan.stride_a, b, plan.ldb, plan.stride_b, &beta,
                                                   c, plan.ldc, plan.stride_c, batch));
}

}  // namespace normlab
