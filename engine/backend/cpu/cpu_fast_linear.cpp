// Fast linear layers and token + position embeddings: allocation-free GEMMs (cpu_gemm.h) on row blocks
// claimed by the OpenMP threads. Backward cuts dx by rows of dy and dW / db by output rows (dW[o0:o1] +=
// dy[:, o0:o1]^T x), so no two chunks write the same memory and no reduction is needed.
#include <algorithm>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/cpu_gemm.h"
#include "engine/backend/cpu/cpu_kernels.h"
#include "engine/backend/cpu/cpu_parallel.h"

namespace normlab {

namespace {
constexpr int64_t kRowAlign = 8;  // row blocks start on multiples of 8 rows
}  // namespace

std::string CpuBackend::name() const {
    return "cpu (task pool + Eigen kernels, " + thread_count_text() + ")";
}

void CpuBackend::fill(float* dst, float value, size_t count) {
    parallel_ranges(m_pool, static_cast<int64_t>(count), static_cast<int64_t>(count) / 8, 16,
                    [&](int, Range r) { std::fill(dst + r.begin, dst + r.end, value); });
}

void CpuBackend::embedding_forward(float* x, const int32_t* tokens, const float* wte, const float* wpe,
                                   int batch, int seq, int d) {
    const int64_t n = static_cast<int64_t>(batch) * seq;
    parallel_ranges(m_pool, n, n * d, 1, [&](int, Range rows) {
        for (int64_t row = rows.begin; row < rows.end; ++row)
            embedding_row(x + row * d, wte + static_cast<int64_t>(tokens[row]) * d, wpe + (row % seq) * d, d);
    });
}

void CpuBackend::linear_forward(float* y, const float* x, const float* w, const float* b, int n, int in,
                                int out) {
    const int64_t work = static_cast<int64_t>(n) * in * out;
    parallel_ranges(m_pool, n, work, kRowAlign, [&](int, Range rows) {
        float* output = y + rows.begin * out;
        if (b) {  // the product adds onto the bias rows: no zeroing pass, no bias pass
            for (int64_t row = 0; row < rows.size(); ++row) std::copy(b, b + out, output + row * out);
        }
        gemm(output, out, {x + rows.begin * in, in}, {w, in, true}, rows.size(), out, in, b != nullptr);
    });
}

void CpuBackend::linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x,
                                 const float* w, int n, int in, int out, bool accumulate_dx) {
    const int64_t work = static_cast<int64_t>(n) * in * out * (dx ? 2 : 1);
    // dW is cut along its wider side: each chunk repacks the other operand whole (x when cut by output
    // rows, dy when cut by input columns), so the narrower one is the one repacked.
    const bool by_outputs = out >= in;
    const int dx_chunks = dx ? chunk_count(m_threads, n, work, kRowAlign) : 0;
    const int dw_chunks = chunk_count(m_threads, by_outputs ? out : in, work, kRowAlign);
    const int db_tasks = db && !by_outputs ? 1 : 0;  // cut by inputs: the bias gradient is a task of its own
    auto add_bias_gradient = [&](Range outputs) {
        float* grad_bias = db + outputs.begin;
        for (int row = 0; row < n; ++row) {
            const float* grad_row = dy + static_cast<int64_t>(row) * out + outputs.begin;
            for (int64_t j = 0; j < outputs.size(); ++j) grad_bias[j] += grad_row[j];
        }
    };
    auto run_task = [&](int task) {
        if (task < dx_chunks) {
            const Range rows = share(n, task, dx_chunks, kRowAlign);
            gemm(dx + rows.begin * in, in, {dy + rows.begin * out, out}, {w, in}, rows.size(), in, out,
                 accumulate_dx);
            return;
        }
        task -= dx_chunks;
        if (task == dw_chunks) return add_bias_gradient({0, out});
        if (!by_outputs) {
            const Range inputs = share(in, task, dw_chunks, kRowAlign);
            if (inputs.size() > 0)
                gemm(dw + inputs.begin, in, {dy, out, true}, {x + inputs.begin, in}, out, inputs.size(), n,
                     true);
            return;
        }
        const Range outputs = share(out, task, dw_chunks, kRowAlign);
        if (outputs.size() == 0) return;
        gemm(dw + outputs.begin * in, in, {dy + outputs.begin, out, true}, {x, in}, outputs.size(), in, n,
             true);
        if (db) add_bias_gradient(outputs);
    };
    const int tasks = dx_chunks + dw_chunks + db_tasks;
    if (dw_chunks > 1) {
        m_pool.run(tasks, run_task);
    } else {
        for (int task = 0; task < tasks; ++task) run_task(task);
    }
}

}  // namespace normlab
