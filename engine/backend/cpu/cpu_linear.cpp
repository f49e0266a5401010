// Linear layers and embeddings on the CPU: Eigen GEMMs for x W^T, dy W and dy^T x; serial, ordered
// scatter-adds for embedding gradients so the result does not depend on the thread count.
#include "engine/backend/cpu/cpu_kernels.h"
#include "engine/backend/cpu/cpu_reference_backend.h"
#include "engine/backend/cpu/eigen_maps.h"

namespace normlab {

void CpuReferenceBackend::linear_forward(float* y, const float* x, const float* w, const float* b, int n,
                                         int in, int out) {
    ConstMatrixView input(x, n, in);
    ConstMatrixView weight(w, out, in);
    MatrixView output(y, n, out);
    output.noalias() = input * weight.transpose();
    if (b) {
        Eigen::Map<const Eigen::RowVectorXf> bias(b, out);
        output.rowwise() += bias;
    }
}

void CpuReferenceBackend::linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x,
                                          const float* w, int n, int in, int out, bool accumulate_dx) {
    ConstMatrixView grad_out(dy, n, out);
    if (dx) {
        ConstMatrixView weight(w, out, in);
        MatrixView grad_in(dx, n, in);
        if (accumulate_dx) {
            grad_in.noalias() += grad_out * weight;
        } else {
            grad_in.noalias() = grad_out * weight;
        }
    }
    ConstMatrixView input(x, n, in);
    MatrixView grad_weight(dw, out, in);
    grad_weight.noalias() += grad_out.transpose() * input;
    if (db) {
        Eigen::Map<Eigen::RowVectorXf> grad_bias(db, out);
        grad_bias += grad_out.colwise().sum();
    }
}

void CpuReferenceBackend::embedding_forward(float* x, const int32_t* tokens, const float* wte,
                                            const float* wpe, int batch, int seq, int d) {
#pragma omp parallel for schedule(static)
    for (int row = 0; row < batch * seq; ++row) {
        embedding_row(x + static_cast<size_t>(row) * d, wte + static_cast<size_t>(tokens[row]) * d,
                      wpe ? wpe + static_cast<size_t>(row % seq) * d : nullptr, d);
    }
}

void CpuReferenceBackend::embedding_backward(float* dwte, float* dwpe, const float* dx, const int32_t* tokens,
                                             int batch, int seq, int d) {
    for (int row = 0; row < batch * seq; ++row) {
        const float* grad = dx + static_cast<size_t>(row) * d;
        float* token_grad = dwte + static_cast<size_t>(tokens[row]) * d;
        for (int i = 0; i < d; ++i) token_grad[i] += grad[i];
        if (!dwpe) continue;
        float* position_grad = dwpe + static_cast<size_t>(row % seq) * d;
        for (int i = 0; i < d; ++i) position_grad[i] += grad[i];
    }
}

}  // namespace normlab
