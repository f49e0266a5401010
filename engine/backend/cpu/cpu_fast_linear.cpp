// Fast linear layers: the reference products on row blocks, one block per OpenMP thread. Backward
// splits dx by rows of dy and dW / db by output rows (dW[o0:o1] += dy[:, o0:o1]^T x), so no two
// threads write the same memory and no reduction is needed.
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/cpu_parallel.h"
#include "engine/backend/cpu/eigen_maps.h"

namespace normlab {

namespace {
constexpr int64_t kRowAlign = 8;  // row blocks start on multiples of 8 rows
}  // namespace

void CpuBackend::fill(float* dst, float value, size_t count) {
    parallel_ranges(m_threads, static_cast<int64_t>(count), static_cast<int64_t>(count) / 8, 16,
                    [&](int, Range r) { std::fill(dst + r.begin, dst + r.end, value); });
}

void CpuBackend::linear_forward(float* y, const float* x, const float* w, const float* b, int n, int in,
                                int out) {
    const int64_t work = static_cast<int64_t>(n) * in * out;
    parallel_ranges(m_threads, n, work, kRowAlign, [&](int, Range rows) {
        CpuReferenceBackend::linear_forward(y + rows.begin * out, x + rows.begin * in, w, b,
                                            static_cast<int>(rows.size()), in, out);
    });
}

void CpuBackend::linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x,
                                 const float* w, int n, int in, int out, bool accumulate_dx) {
    const int64_t work = static_cast<int64_t>(n) * in * out * (dx ? 2 : 1);
    ConstMatrixView grad_out(dy, n, out);
    ConstMatrixView input(x, n, in);
    ConstMatrixView weight(w, out, in);
    parallel_team(m_threads, work, [&](int thread, int team) {
        const Range rows = share(n, thread, team, kRowAlign);
        if (dx && rows.size() > 0) {
            MatrixView grad_in(dx + rows.begin * in, rows.size(), in);
            const auto grad_rows = grad_out.middleRows(rows.begin, rows.size());
            if (accumulate_dx) {
                grad_in.noalias() += grad_rows * weight;
            } else {
                grad_in.noalias() = grad_rows * weight;
            }
        }
        const Range outputs = share(out, thread, team, kRowAlign);
        if (outputs.size() == 0) return;
        const auto grad_columns = grad_out.middleCols(outputs.begin, outputs.size());
        MatrixView grad_weight(dw + outputs.begin * in, outputs.size(), in);
        grad_weight.noalias() += grad_columns.transpose() * input;
        if (db) {
            Eigen::Map<Eigen::RowVectorXf> grad_bias(db + outputs.begin, outputs.size());
            for (int row = 0; row < n; ++row) grad_bias += grad_columns.row(row);
        }
    });
}

}  // namespace normlab
