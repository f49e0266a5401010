// Emulated mixed precision of the model's matmuls (docs/precision.md): a linear layer's input, weight and
// output rounded to train.precision's format in the forward pass, its output's gradient and its weight
// gradient in the backward pass, the product itself accumulated in fp32, as autocast's GEMMs do. Tallies,
// per site (a sub-layer, or the head), what the rounding did: overflows, underflows, the stream's peak.
#pragma once
#include <cstddef>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/number_formats.h"

namespace normlab {

// Where a product's input x stands: Shared (read by other ops too, such as the residual stream: the
// product rounds a copy), or Rounded (a buffer only products read, which its producer has rounded in
// place with round_activation: no copy in forward, none again in backward).
enum class MatmulInput { Shared, Rounded };

class MatmulPrecision {
  public:
    explicit MatmulPrecision(Backend& backend) : m_backend(&backend) {}
    ~MatmulPrecision() { release(); }
    MatmulPrecision(const MatmulPrecision&) = delete;
    MatmulPrecision& operator=(const MatmulPrecision&) = delete;

    NumberFormat format() const { return m_format; }
    bool emulated() const { return m_format != NumberFormat::Fp32; }
    void set_format(NumberFormat format);

    // Before every pass, with `sites` tally sites: when emulating, zeroes the tallies (allocating them,
    // and the scratch later, on the backend); in fp32, frees them. The calls below count into the site
    // chosen last.
    void begin_pass(int sites);
    void set_site(int site) { m_site = site; }
    // After begin_pass: the parameters' rounded copy, made once for the pass; a weight inside
    // [params, params + count) is read from it (any other weight is rounded at its call).
    void round_weights(const float* params, size_t count);
    // Frees every buffer on the backend (before the model moves to another backend; the next pass makes
    // them again), and the backend the calls run on from then on.
    void release();
    void use_backend(Backend& backend) { m_backend = &backend; }

    // Backend::linear_forward / linear_backward with the rounding around them; without emulation, those
    // calls alone. backward rounds the weight gradient where it lies, so `dw` must hold no other
    // contribution yet: every weight of the model is used by one product per pass, and the model zeroes
    // the gradients before backward.
    void forward(float* y, const float* x, const float* w, const float* b, int n, int in, int out,
                 MatmulInput input = MatmulInput::Shared);
    void backward(float* dx, float* dw, float* db, const float* dy, const float* x, const float* w, int n,
                  int in, int out, bool accumulate_dx, MatmulInput input = MatmulInput::Shared);
    // Rounds, in place and counted as the site's activations, a buffer that only products read (a norm's
    // output before a projection, attention's heads, the FFN's hidden layer); nothing in fp32.
    void round_activation(float* x, size_t values);
    // Measures, unrounded, the largest |value| of a residual-stream tensor for the site's headroom.
    void measure_stream(const float* values, size_t count);

    // What the rounding did at one site since begin_pass: counts of values rounded and of those that
    // overflowed and underflowed, forward (activations) and backward (gradients), and the largest |x|
    // of the residual stream measured there.
    struct SiteTally {
        double activations = 0.0, activation_overflows = 0.0, activation_underflows = 0.0;
        double gradients = 0.0, gradient_overflows = 0.0, gradient_underflows = 0.0;
        double stream_max_abs = 0.0;
    };
    // Every site's tally (downloads the backend's counters).
    std::vector<SiteTally> read_tallies();

  private:
    enum Buffer { kInput, kWeight, kOutputGrad, kRoundedParams, kBufferCount };
    // Tally floats per site: activations, gradients, stream, each Backend::round_to_format's three.
    static constexpr size_t kTallyFloats = 9;
    float* scratch(Buffer buffer, size_t count);
    // The weight rounded: its place in the parameters' rounded copy, or rounded into scratch.
    const float* rounded_weight(const float* w, size_t count);
    // x itself when it is Rounded, else a rounded copy in scratch (counted into `into_tally`, or not).
    const float* rounded_input(const float* x, size_t count, MatmulInput input, float* into_tally);
    // The current site's tally `part` (0 activations, 1 gradients, 2 stream), or null outside a pass
    // that begin_pass opened (Admin's profiling runs sub-layers alone).
    float* tally(size_t part) {
        return m_tallies ? m_tallies + kTallyFloats * static_cast<size_t>(m_site) + 3 * part : nullptr;
    }
    // Adds to the current site's count of values rounded (activations or gradients), inside a pass.
    void count(std::vector<double>& counts, size_t values) {
        if (static_cast<size_t>(m_site) < counts.size())
            counts[static_cast<size_t>(m_site)] += static_cast<double>(values);
    }
    void round(float* dst, const float* src, size_t count, float* into_tally);

    NumberFormat m_format = NumberFormat::Fp32;
    FormatLimits m_limits = format_limits(NumberFormat::Fp32);
    Backend* m_backend;  // the model's: where the calls run and the buffers below live
    float* m_buffers[kBufferCount] = {};
    size_t m_capacity[kBufferCount] = {};
    float* m_tallies = nullptr;
    const float* m_params = nullptr;  // round_weights' parameters (kRoundedParams holds them rounded)
    size_t m_param_count = 0;
    int m_sites = 0;
    int m_site = 0;
    std::vector<double> m_activations, m_gradients;  // values rounded per site, counted on the host
};

}  // namespace normlab
