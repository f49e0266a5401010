// The column-major GEMMs (cuBLAS's convention) that compute NormLab's row-major products: a row-major
// M[r, c] is the column-major M^T, so each product is described once here, used by the CUDA backend
// and checked on the host against the CPU reference (tests/engine/test_cuda_plans.cpp). Plain C++.
#pragma once

namespace normlab {

// C = alpha op(A) op(B) + beta C, column-major, with op = transpose when asked; batched calls step
// A, B and C by their strides.
struct GemmPlan {
    bool transpose_a = false;
    bool transpose_b = false;
    int m = 0, n = 0, k = 0;
    int lda = 0, ldb = 0, ldc = 0;
    long long stride_a = 0, stride_b = 0, stride_c = 0;
};

// y[rows, out] = x[rows, in] W[out, in]^T: A = W, B = x, C = y (column-major y^T = (W^T)^T x^T).
inline GemmPlan linear_forward_plan(int rows, int in, int out) {
    return {true, false, out, rows, in, in, in, out};
}

// dx[rows, in] = dy[rows, out] W[out, in]: A = W, B = dy, C = dx (dx^T = W^T dy^T).
inline GemmPlan linear_input_grad_plan(int rows, int in, int out) {
    return {false, false, in, rows, out, in, out, in};
}

// dW[out, in] += dy[rows, out]^T x[rows, in]: A = x, B = dy, C = dW (dW^T = x^T (dy^T)^T).
inline GemmPlan linear_weight_grad_plan(int rows, int in, int out) {
    return {false, true, in, out, rows, in, out, in};
}

// Per (batch, head) pair, on head-major [pairs][seq][head_dim] operands and [pairs][seq][seq] scores:
// S[seq, seq] = X Y^T with A = Y, B = X, C = S (S = Q K^T: A = K, B = Q; dP = dO V^T: A = V, B = dO).
inline GemmPlan attention_scores_plan(int seq, int head_dim) {
    const long long head = static_cast<long long>(seq) * head_dim;
    return {true,
            false,
            seq,
            seq,
            head_dim,
            head_dim,
            head_dim,
            seq,
            head,
            head,
            static_cast<long long>(seq) * seq};
}

// Z[seq, hd] = P[seq, seq] Y[seq, hd] with A = Y, B = P, C = Z (O = P V: A = V; dQ = dS K: A = K).
inline GemmPlan attention_apply_plan(int seq, int head_dim) {
    const long long head = static_cast<long long>(seq) * head_dim;
    return {false,    false, head_dim, seq,  seq,
            head_dim, seq,   head_dim, head, static_cast<long long>(seq) * seq,
            head};
}

// Z[seq, hd] = P[seq, seq]^T Y[seq, hd] with A = Y, B = P, C = Z (dV = P^T dO: A = dO; dK = dS^T Q: A = Q).
inline GemmPlan attention_apply_transposed_plan(int seq, int head_dim) {
    const long long head = static_cast<long long>(seq) * head_dim;
    return {false, true, head_dim, seq, seq, head_dim, seq, head_dim, head, static_cast<long long>(seq) * seq,
            head};
}

}  // namespace normlab
