// Fast linear layers and token + position embeddings: allocation-free GEMMs (cpu_gemm.h) on row blocks
// claimed by the task pool's threads, with the operand all chunks share packed once. Backward cuts dx by
// rows of dy and dW / db by its wider side, so no two chunks write the same memory and none reduce.
#include <algorithm>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/cpu_gemm.h"
#include "engine/backend/cpu/cpu_kernels.h"
#include "engine/backend/cpu/cpu_parallel.h"

namespace normlab {

namespace {
constexpr int64_t kRowAlign = 8;  // row blocks start on multiples of 8 rows

// Packs B (`depth` x `cols`, as the product sees it) into `to` once for all of an op's chunks, its
// column panels spread over the threads when it is large enough to be worth it.
void pack_shared(TaskPool& pool, float* to, GemmOperand b, int64_t depth, int64_t cols, GemmKernel kernel) {
    parallel_ranges(pool, cols, depth * cols, pack_column_align(kernel), [&](int, Range columns) {
        pack_columns(to, b, depth, cols, columns.begin, columns.end, kernel);
    });
}

// B as every chunk of an op reads it: where it is when the GEMM can, else packed once into `to`.
PackedOperand shared_operand(TaskPool& pool, float* to, GemmOperand b, int64_t depth, int64_t cols,
                             GemmKernel kernel) {
    if (readable_in_place(b, cols, kernel)) return {b.data, depth, cols, b.stride};
    pack_shared(pool, to, b, depth, cols, kernel);
    return {to, depth, cols, 0, kernel};
}

// A's rows from `row` on.
GemmOperand rows_from(GemmOperand a, int64_t row) {
    return {a.transposed ? a.data + row : a.data + row * a.stride, a.stride, a.transposed};
}
}  // namespace

std::string CpuBackend::name() const {
    const char* kernel = m_linear_kernel == GemmKernel::library ? "LIBXSMM GEMM" : "blocked GEMM";
    return std::string("cpu (task pool + ") + kernel + ", " + thread_count_text() + ")";
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
            embedding_row(x + row * d, wte + static_cast<int64_t>(tokens[row]) * d,
                          wpe ? wpe + (row % seq) * d : nullptr, d);
    });
}

void CpuBackend::linear_forward(float* y, const float* x, const float* w, const float* b, int n, int in,
                                int out) {
    float* packed_w = scratch_floats(packed_size(in, out, m_linear_kernel));
    const PackedOperand weights = shared_operand(m_pool, packed_w, {w, in, true}, in, out, m_linear_kernel);
    const int64_t work = static_cast<int64_t>(n) * in * out;
    parallel_ranges(m_pool, n, work, kRowAlign, [&](int, Range rows) {
        // the product starts from the bias row: no zeroing pass, no bias pass
        gemm_packed(y + rows.begin * out, out, {x + rows.begin * in, in}, weights, rows.size(),
                    {.row_bias = b});
    });
}

void CpuBackend::linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x,
                                 const float* w, int n, int in, int out, bool accumulate_dx) {
    // W (for dx = dy W) and x (for dW = dy^T x) are read in place or packed once, shared by every chunk;
    // dW's A is dy read transposed, which may want the other kernel.
    const GemmKernel dw_kernel = m_other_kernel;
    const size_t w_size = dx ? packed_size(out, in, m_linear_kernel) : 0;
    float* packed_w = scratch_floats(w_size + packed_size(n, in, dw_kernel));
    const PackedOperand weights =
        dx ? shared_operand(m_pool, packed_w, {w, in}, out, in, m_linear_kernel) : PackedOperand{};
    const PackedOperand inputs_packed = shared_operand(m_pool, packed_w + w_size, {x, in}, n, in, dw_kernel);
    const GemmOperand dy_transposed{dy, out, true};

    const int64_t work = static_cast<int64_t>(n) * in * out * (dx ? 2 : 1);
    // dW is cut along its wider side (the other one is read whole by every chunk).
    const bool by_outputs = out >= in;
    const int64_t dw_align = by_outputs ? kRowAlign : pack_column_align(dw_kernel);
    const int dx_chunks = dx ? chunk_count(m_threads, n, work, kRowAlign) : 0;
    const int dw_chunks = chunk_count(m_threads, by_outputs ? out : in, work, dw_align);
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
            gemm_packed(dx + rows.begin * in, in, {dy + rows.begin * out, out}, weights, rows.size(),
                        {.accumulate = accumulate_dx});
            return;
        }
        task -= dx_chunks;
        if (task == dw_chunks) return add_bias_gradient({0, out});
        if (!by_outputs) {
            const Range inputs = share(in, task, dw_chunks, dw_align);
            gemm_packed(dw, in, dy_transposed, inputs_packed, out, {.accumulate = true}, inputs.begin,
                        inputs.end);
            return;
        }
        const Range outputs = share(out, task, dw_chunks, kRowAlign);
        if (outputs.size() == 0) return;
        gemm_packed(dw + outputs.begin * in, in, rows_from(dy_transposed, outputs.begin), inputs_packed,
                    outputs.size(), {.accumulate = true});
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
