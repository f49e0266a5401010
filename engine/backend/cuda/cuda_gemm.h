// Runs a GemmPlan (gemm_plans.h) with cuBLAS on fp32 matrices: one product, or one strided-batched call
// over `batch` matrices. The plans hold every transpose and leading dimension; this only passes them on.
// `compute` CUBLAS_COMPUTE_32F multiplies in fp32 (cublasSgemm); a _FAST_16BF/_FAST_16F type lets cuBLAS
// read the operands at a lower precision on tensor cores (bf16/fp16, or TF32 as it chose on an H200),
// accumulating in fp32 (cublasGemmStridedBatchedEx).
#pragma once
#include <cublas_v2.h>

#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/gemm_plans.h"

namespace normlab {

inline void run_gemm(cublasHandle_t handle, const GemmPlan& plan, float alpha, const float* a, const float* b,
                     float beta, float* c, int batch = 1, cublasComputeType_t compute = CUBLAS_COMPUTE_32F) {
    const cublasOperation_t op_a = plan.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = plan.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (compute != CUBLAS_COMPUTE_32F) {
        NORMLAB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
            handle, op_a, op_b, plan.m, plan.n, plan.k, &alpha, a, CUDA_R_32F, plan.lda, plan.stride_a, b,
            CUDA_R_32F, plan.ldb, plan.stride_b, &beta, c, CUDA_R_32F, plan.ldc, plan.stride_c, batch,
            compute, CUBLAS_GEMM_DEFAULT));
        return;
    }
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
