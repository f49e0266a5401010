// MatmulPrecision: the rounded copies of a linear layer's operands in scratch that only grows, the
// tallies in backend memory (zeroed per pass, read on telemetry steps), and the host's counts of values
// rounded, which turn the tallies' counts into fractions.
#include "engine/model/matmul_precision.h"

namespace normlab {

namespace {
// The backend told, for one product, the format its operands were rounded to (its native matrix units
// may then multiply them; bit-identical operands either way), and told fp32 again after, also on a throw.
class OperandFormat {
  public:
    OperandFormat(Backend& backend, NumberFormat format) : m_backend(backend) {
        m_backend.set_linear_operand_format(format);
    }
    ~OperandFormat() { m_backend.set_linear_operand_format(NumberFormat::Fp32); }
    OperandFormat(const OperandFormat&) = delete;
    OperandFormat& operator=(const OperandFormat&) = delete;

  private:
    Backend& m_backend;
};
}  // namespace

void MatmulPrecision::set_format(NumberFormat format) {
    m_format = format;
    m_limits = format_limits(format);
}

void MatmulPrecision::release() {
    for (int b = 0; b < kBufferCount; ++b) {
        if (m_buffers[b]) m_backend->release(m_buffers[b]);
        m_buffers[b] = nullptr;
        m_capacity[b] = 0;
    }
    if (m_tallies) m_backend->release(m_tallies);
    m_tallies = nullptr;
    m_sites = 0;
    m_params = nullptr;
}

void MatmulPrecision::begin_pass(int sites) {
    m_site = 0;
    if (!emulated() || sites != m_sites) release();  // fp32 keeps no scratch
    if (!emulated()) return;
    if (!m_tallies) {
        m_tallies = m_backend->allocate(kTallyFloats * static_cast<size_t>(sites));
        m_sites = sites;
    }
    m_backend->fill(m_tallies, 0.0f, kTallyFloats * static_cast<size_t>(sites));
    m_activations.assign(static_cast<size_t>(sites), 0.0);
    m_gradients.assign(static_cast<size_t>(sites), 0.0);
}

float* MatmulPrecision::scratch(Buffer buffer, size_t count) {
    if (m_capacity[buffer] < count) {
        if (m_buffers[buffer]) m_backend->release(m_buffers[buffer]);
        m_buffers[buffer] = nullptr;  // stays null if the allocation below throws
        m_capacity[buffer] = 0;
        m_buffers[buffer] = m_backend->allocate(count);
        m_capacity[buffer] = count;
    }
    return m_buffers[buffer];
}

void MatmulPrecision::round_weights(const float* params, size_t count) {
    m_params = nullptr;
    if (!emulated()) return;
    round(scratch(kRoundedParams, count), params, count, nullptr);
    m_params = params;
    m_param_count = count;
}

const float* MatmulPrecision::rounded_weight(const float* w, size_t count) {
    if (m_params && w >= m_params && w + count <= m_params + m_param_count)
        return m_buffers[kRoundedParams] + (w - m_params);
    float* rounded = scratch(kWeight, count);
    round(rounded, w, count, nullptr);
    return rounded;
}

void MatmulPrecision::round(float* dst, const float* src, size_t count, float* into_tally) {
    m_backend->round_to_format(dst, src, count, m_limits, into_tally);
}

void MatmulPrecision::round_activation(float* x, size_t values) {
    if (!emulated()) return;
    round(x, x, values, tally(0));
    count(m_activations, values);
}

const float* MatmulPrecision::rounded_input(const float* x, size_t count, MatmulInput input,
                                            float* into_tally) {
    if (input == MatmulInput::Rounded) return x;
    float* rounded = scratch(kInput, count);
    round(rounded, x, count, into_tally);
    return rounded;
}

void MatmulPrecision::forward(float* y, const float* x, const float* w, const float* b, int n, int in,
                              int out, MatmulInput input) {
    if (!emulated()) {
        m_backend->linear_forward(y, x, w, b, n, in, out);
        return;
    }
    const size_t inputs = static_cast<size_t>(n) * in, outputs = static_cast<size_t>(n) * out;
    const size_t weights = static_cast<size_t>(out) * in;
    const float* x_rounded = rounded_input(x, inputs, input, tally(0));
    const float* w_rounded = rounded_weight(w, weights);
    {
        const OperandFormat operands(*m_backend, m_format);
        m_backend->linear_forward(y, x_rounded, w_rounded, b, n, in, out);
    }
    round(y, y, outputs, tally(0));
    const size_t counted = (input == MatmulInput::Shared ? inputs : 0) + outputs;  // round_activation's apart
    count(m_activations, counted);
}

void MatmulPrecision::backward(float* dx, float* dw, float* db, const float* dy, const float* x,
                               const float* w, int n, int in, int out, bool accumulate_dx,
                               MatmulInput input) {
    if (!emulated()) {
        m_backend->linear_backward(dx, dw, db, dy, x, w, n, in, out, accumulate_dx);
        return;
    }
    const size_t inputs = static_cast<size_t>(n) * in, outputs = static_cast<size_t>(n) * out;
    const size_t weights = static_cast<size_t>(out) * in;
    float* dy_rounded = scratch(kOutputGrad, outputs);
    round(dy_rounded, dy, outputs, tally(1));
    // the forward's input again (rounding is deterministic)
    const float* x_rounded = rounded_input(x, inputs, input, nullptr);
    const float* w_rounded = rounded_weight(w, weights);
    {
        const OperandFormat operands(*m_backend, m_format);
        m_backend->linear_backward(dx, dw, db, dy_rounded, x_rounded, w_rounded, n, in, out, accumulate_dx);
    }
    if (dw) round(dw, dw, weights, tally(1));  // the weight gradient in the format, held in fp32
    count(m_gradients, outputs + (dw ? weights : 0));
}

void MatmulPrecision::measure_stream(const float* values, size_t count) {
    if (emulated()) round(nullptr, values, count, tally(2));
}

std::vector<MatmulPrecision::SiteTally> MatmulPrecision::read_tallies() {
    std::vector<SiteTally> sites(static_cast<size_t>(m_sites));
    if (!m_tallies) return sites;
    std::vector<float> host(kTallyFloats * sites.size());
    m_backend->download(host.data(), m_tallies, host.size());
    for (size_t s = 0; s < sites.size(); ++s) {
        const float* t = host.data() + kTallyFloats * s;
        sites[s] = {m_activations[s], t[0], t[1], m_gradients[s], t[3], t[4], t[8]};
    }
    return sites;
}

}  // namespace normlab
