// run_backend_selftest: six tiny models covering the op families (LayerNorm, RMSNorm and DyT; Pre-,
// Post- and Peri-LN; QK-norm, z-loss, Admin's learnable shortcut scales, an encoder with cross-attention;
// SwiGLU, GeGLU, RoPE, multi-query attention, no biases, a tied head; the four optimizers), each trained
// three steps on the candidate and on the CPU reference, every step's values compared in the order they are
// computed.
#include "engine/selfcheck/selftest.h"

#include <omp.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <utility>

#include "engine/backend/cpu/cpu_reference_backend.h"
#include "engine/core/rng.h"
#include "engine/train/optimizer.h"

namespace normlab {

namespace {

constexpr int kVocab = 13;
constexpr int kBatchRows = 4;
constexpr int kSteps = 3;
// The seed's batches leave no near-tie for the argmax behind "correct rows": on the reference, the two
// largest logits of any row of any step are at least 8.6e-5 apart, far above a GPU's rounding (~1e-6).
constexpr uint64_t kSeed = 20261123;
// Sums of squares cannot cancel: each is compared relative to itself, floored only to treat 0 vs 0.
constexpr double kSumFloor = 1e-30;

// A model the check trains, and how.
struct TinyModel {
    std::string name;
    ModelConfig model;
    TrainConfig train;
    double grad_scale = 1.0;  // the clipping factor handed to the optimizer
};

ModelConfig tiny_config(NormPlacement placement, NormType type, Activation activation) {
    ModelConfig config;
    config.d_model = 16;
    config.heads = 2;
    config.d_ff = 32;
    config.layers = 2;
    config.seq_len = 8;
    config.norm_placement = placement;
    config.norm_type = type;
    config.activation = activation;
    return config;
}

TrainConfig tiny_training(OptimizerKind optimizer, double weight_decay = 0.0) {
    TrainConfig train;
    train.optimizer = optimizer;
    train.lr = 1e-2;
    train.weight_decay = weight_decay;
    return train;
}

std::vector<TinyModel> tiny_models() {
    std::vector<TinyModel> models;
    TinyModel pre{"Pre-LN LayerNorm, QK-norm, z-loss",
                  tiny_config(NormPlacement::Pre, NormType::LayerNorm, Activation::Gelu),
                  tiny_training(OptimizerKind::Adam)};
    pre.model.qk_norm = QkNorm::LayerNorm;
    pre.train.z_loss = 1e-2;
    models.push_back(pre);

    TinyModel post{"Post-LN RMSNorm, Admin",
                   tiny_config(NormPlacement::Post, NormType::RmsNorm, Activation::Relu),
                   tiny_training(OptimizerKind::Sgd)};
    post.model.residual = Residual::Admin;
    models.push_back(post);

    TinyModel encoder{"encoder-decoder, Pre-LN LayerNorm, QK-RMSNorm",
                      tiny_config(NormPlacement::Pre, NormType::LayerNorm, Activation::Gelu),
                      tiny_training(OptimizerKind::AdamW, 0.1), 0.5};
    encoder.model.encoder_layers = 1;
    encoder.model.qk_norm = QkNorm::RmsNorm;
    models.push_back(encoder);

    models.push_back({"Peri-LN DyT", tiny_config(NormPlacement::Peri, NormType::DyT, Activation::Relu),
                      tiny_training(OptimizerKind::RAdam)});
    // without linear biases: a bias added to the stream has a gradient of exactly 0 under BatchNorm
    // (every later BatchNorm removes it), which leaves float noise to compare
    TinyModel batch_norm{"Pre-LN BatchNorm, no biases",
                         tiny_config(NormPlacement::Pre, NormType::BatchNorm, Activation::Gelu),
                         tiny_training(OptimizerKind::Adam)};
    batch_norm.model.bias = false;
    models.push_back(batch_norm);

    TinyModel llama{"Llama-like: RMSNorm, SwiGLU, QK-norm then RoPE, multi-query, no biases, tied",
                    tiny_config(NormPlacement::Pre, NormType::RmsNorm, Activation::Relu),
                    tiny_training(OptimizerKind::AdamW, 0.1)};
    llama.model.ffn = FeedForward::SwiGlu;
    llama.model.position = Position::Rope;
    llama.model.qk_norm = QkNorm::RmsNorm;
    llama.model.bias = false;
    llama.model.tie_embeddings = true;
    llama.model.kv_heads = 1;
    models.push_back(llama);

    TinyModel geglu{"GeGLU, RoPE, no positions on the tokens",
                    tiny_config(NormPlacement::Pre, NormType::LayerNorm, Activation::Relu),
                    tiny_training(OptimizerKind::Adam)};
    geglu.model.ffn = FeedForward::GeGlu;
    geglu.model.position = Position::Rope;
    models.push_back(geglu);
    return models;
}

// Random tokens and targets, every fourth position unscored.
Batch tiny_batch(int seq, uint64_t seed) {
    Rng rng(seed);
    Batch batch{kBatchRows, seq, {}, {}};
    for (int i = 0; i < kBatchRows * seq; ++i) {
        batch.inputs.push_back(rng.below(kVocab));
        batch.targets.push_back(i % 4 == 3 ? -1 : rng.below(kVocab));
    }
    return batch;
}

std::vector<float> download(Backend& backend, const float* source, size_t count) {
    std::vector<float> host(count);
    backend.download(host.data(), source, count);
    return host;
}

// One entry's values out of a whole host copy of a layout buffer.
std::vector<float> entry_values(const std::vector<float>& buffer, const ParamEntry& entry) {
    const auto begin = buffer.begin() + static_cast<std::ptrdiff_t>(entry.offset);
    return {begin, begin + static_cast<std::ptrdiff_t>(entry.count)};
}

// Every active entry of two host copies of a layout buffer, named "<entry><suffix>".
std::vector<ParityCheck> compare_entry_buffers(const Model& model, const std::vector<float>& actual,
                                               const std::vector<float>& reference,
                                               const std::string& suffix) {
    std::vector<ParityCheck> checks;
    const auto& entries = model.layout().entries;
    for (size_t i = 0; i < entries.size(); ++i) {
        if (!model.active(static_cast<int>(i))) continue;
        checks.push_back(compare_tensors(entries[i].name + suffix, entry_values(actual, entries[i]),
                                         entry_values(reference, entries[i])));
    }
    return checks;
}

// Per-entry sums of squares (gradient norms, update ratios), each relative to itself.
std::vector<ParityCheck> compare_entry_sums(const Model& model, const std::vector<double>& actual,
                                            const std::vector<double>& reference, const std::string& suffix) {
    std::vector<ParityCheck> checks;
    const auto& entries = model.layout().entries;
    for (size_t i = 0; i < entries.size(); ++i) {
        if (!model.active(static_cast<int>(i))) continue;
        checks.push_back(compare_values(entries[i].name + suffix, {actual[i]}, {reference[i]},
                                        kParityTolerance, kSumFloor));
    }
    return checks;
}

// A tiny model with its optimizer on one backend, initialised from the check's seed.
class Trainee {
  public:
    Trainee(const TinyModel& tiny, Backend& backend)
        : m_tiny(tiny), m_backend(backend), m_model(tiny.model, kVocab, backend), m_optimizer(m_model) {
        m_model.initialize(kSeed);
        for (const ParamEntry& entry : m_model.layout().entries)
            m_slices.push_back({entry.offset, entry.count});
    }

    // What a forward and backward pass gave, on the host.
    struct Pass {
        ForwardStats forward;
        std::vector<float> grads;
        std::vector<double> grad_squares;  // per layout entry
    };
    // What an optimizer step gave, on the host.
    struct Update {
        std::vector<float> updates, params;
        std::vector<double> param_squares, update_squares;  // per layout entry
    };

    Pass forward_backward(const Batch& batch, int64_t step) {
        Pass pass;
        pass.grad_squares.resize(m_slices.size());
        m_model.set_training_step(step);
        pass.forward = m_model.forward_backward(
            batch,
            {.backward = true, .attention_stats = true, .z_loss = static_cast<float>(m_tiny.train.z_loss)});
        m_backend.sum_squares(m_model.grads(), m_slices, pass.grad_squares.data());
        pass.grads = download(m_backend, m_model.grads(), m_model.layout().total);
        return pass;
    }

    void adopt_gradients(const std::vector<float>& grads) {
        m_backend.upload(m_model.grads(), grads.data(), grads.size());
    }

    Update update(int64_t step) {
        Update result;
        result.param_squares.resize(m_slices.size());
        result.update_squares.resize(m_slices.size());
        m_optimizer.update(m_tiny.train, step, m_tiny.train.lr, m_tiny.grad_scale,
                           result.param_squares.data(), result.update_squares.data());
        result.updates = download(m_backend, m_optimizer.last_update(), m_model.layout().total);
        result.params = download(m_backend, m_model.params(), m_model.layout().total);
        return result;
    }

    const Model& model() const { return m_model; }

  private:
    const TinyModel& m_tiny;
    Backend& m_backend;
    Model m_model;
    Optimizer m_optimizer;
    std::vector<Slice> m_slices;
};

// Gathers the checks into the report's rows (one per model and quantity, in first-seen order) and
// remembers the first item over its tolerance.
class ReportBuilder {
  public:
    explicit ReportBuilder(SelfTestReport& report) : m_report(report) {}

    void add(const std::string& model, const std::string& quantity, int step,
             const std::vector<ParityCheck>& checks) {
        SelfTestCheck& row = row_for(model, quantity);
        for (const ParityCheck& check : checks) {
            ++row.compared;
            if (row.compared == 1 || check.severity() > row.worst.severity()) {
                row.worst = check;
                row.worst_step = step;
            }
            if (!check.passed() && m_report.first_difference.empty()) {
                m_report.first_difference =
                    check.describe() + " (" + model + ", step " + std::to_string(step) + ")";
            }
        }
    }

  private:
    SelfTestCheck& row_for(const std::string& model, const std::string& quantity) {
        const auto key = std::make_pair(model, quantity);
        const auto found = m_rows.find(key);
        if (found != m_rows.end()) return m_report.checks[found->second];
        m_rows.emplace(key, m_report.checks.size());
        m_report.checks.push_back({model, quantity, {}, 0, 0});
        return m_report.checks.back();
    }

    SelfTestReport& m_report;
    std::map<std::pair<std::string, std::string>, size_t> m_rows;
};

void check_pass(ReportBuilder& builder, const TinyModel& tiny, const Model& model, int step,
                const Trainee::Pass& actual, const Trainee::Pass& reference) {
    builder.add(tiny.name, "loss", step, compare_loss(actual.forward, reference.forward));
    builder.add(tiny.name, "telemetry", step, compare_telemetry(actual.forward, reference.forward));
    builder.add(tiny.name, "gradients", step,
                compare_entry_buffers(model, actual.grads, reference.grads, " gradient"));
    builder.add(
        tiny.name, "gradients", step,
        compare_entry_sums(model, actual.grad_squares, reference.grad_squares, " gradient sum of squares"));
}

void check_update(ReportBuilder& builder, const TinyModel& tiny, const Model& model, int step,
                  const Trainee::Update& actual, const Trainee::Update& reference) {
    builder.add(tiny.name, "updates", step,
                compare_entry_buffers(model, actual.updates, reference.updates, " update"));
    builder.add(
        tiny.name, "updates", step,
        compare_entry_sums(model, actual.update_squares, reference.update_squares, " update sum of squares"));
    builder.add(tiny.name, "parameters", step,
                compare_entry_buffers(model, actual.params, reference.params, " after the update"));
    builder.add(tiny.name, "parameters", step,
                compare_entry_sums(model, actual.param_squares, reference.param_squares, " sum of squares"));
}

// Each step: the passes compared, then both optimizers step from the reference's gradients. Adam divides
// by sqrt(v) + eps, so from its own gradients a candidate's rounding would come back magnified (a
// gradient that is rounding noise, such as the key bias's, which softmax ignores, turns into a whole
// +-lr step); from the same gradients the update shows the optimizer's own error. Parameters and
// moments stay the candidate's own, so what it carries from step to step is checked too.
void check_tiny_model(ReportBuilder& builder, const TinyModel& tiny, Backend& candidate, Backend& reference) {
    Trainee actual(tiny, candidate);
    Trainee expected(tiny, reference);
    for (int step = 1; step <= kSteps; ++step) {
        const Batch batch = tiny_batch(tiny.model.seq_len, mix_seed(kSeed, static_cast<uint64_t>(step)));
        const Trainee::Pass actual_pass = actual.forward_backward(batch, step);
        const Trainee::Pass expected_pass = expected.forward_backward(batch, step);
        check_pass(builder, tiny, expected.model(), step, actual_pass, expected_pass);
        actual.adopt_gradients(expected_pass.grads);
        check_update(builder, tiny, expected.model(), step, actual.update(step), expected.update(step));
    }
}

// A CPU backend sets the calling thread's OpenMP thread count when it is made: the check's reference
// must leave the caller's as it was.
class OpenMpThreadsRestored {
  public:
    OpenMpThreadsRestored() : m_threads(omp_get_max_threads()) {}
    ~OpenMpThreadsRestored() { omp_set_num_threads(m_threads); }
    OpenMpThreadsRestored(const OpenMpThreadsRestored&) = delete;
    OpenMpThreadsRestored& operator=(const OpenMpThreadsRestored&) = delete;

  private:
    int m_threads;
};

ParityCheck compare_scalar(std::string what, double actual, double reference,
                           double tolerance = kParityTolerance) {
    return compare_values(std::move(what), {actual}, {reference}, tolerance);
}

}  // namespace

std::vector<ParityCheck> compare_loss(const ForwardStats& actual, const ForwardStats& reference) {
    return {compare_scalar("loss", actual.loss, reference.loss),
            compare_scalar("scored rows", static_cast<double>(actual.scored),
                           static_cast<double>(reference.scored), 0.0),
            compare_scalar("correct rows", static_cast<double>(actual.correct),
                           static_cast<double>(reference.correct), 0.0)};
}

// Walks ForwardStats' field tables (engine/model/forward_stats.h): a field with a row is compared.
std::vector<ParityCheck> compare_telemetry(const ForwardStats& actual, const ForwardStats& reference) {
    using namespace forward_fields;
    std::vector<ParityCheck> checks;
    for (const PassScalar& field : kPassScalars)
        checks.push_back(compare_scalar(field.name, actual.*field.member, reference.*field.member));
    checks.push_back(compare_scalar("first_nonfinite_block", actual.first_nonfinite_block,
                                    reference.first_nonfinite_block, 0.0));
    for (const Stack& stack : kStacks) {
        for (const BlockList& field : kBlockLists) {
            if (!(field.stacks & stack.mask)) continue;
            checks.push_back(compare_values(stack.prefix + std::string(field.name),
                                            (actual.*stack.member).*field.member,
                                            (reference.*stack.member).*field.member));
        }
    }
    for (const SublayerList& field : kSublayerLists) {
        checks.push_back(compare_values(field.name, actual.sublayers.*field.member,
                                        reference.sublayers.*field.member, field.tolerance));
    }
    // the final norms' scales after the lists, so that a wrong reduction is first named by the residual sums
    for (const Stack& stack : kStacks) {
        for (const StackScalar& field : kStackScalars) {
            if (!(field.stacks & stack.mask)) continue;
            checks.push_back(compare_scalar(stack.prefix + std::string(field.name),
                                            (actual.*stack.member).*field.member,
                                            (reference.*stack.member).*field.member));
        }
    }
    return checks;
}

std::vector<ParityCheck> compare_entries(Model& actual, Model& reference, bool gradient) {
    const size_t total = reference.layout().total;
    const float* actual_buffer = gradient ? actual.grads() : actual.params();
    const float* reference_buffer = gradient ? reference.grads() : reference.params();
    return compare_entry_buffers(reference, download(actual.backend(), actual_buffer, total),
                                 download(reference.backend(), reference_buffer, total),
                                 gradient ? " gradient" : "");
}

SelfTestReport run_backend_selftest(Backend& candidate) {
    const auto started = std::chrono::steady_clock::now();
    const OpenMpThreadsRestored restored;
    CpuReferenceBackend reference(1);  // tiny ops: more threads would only wait for each other
    SelfTestReport report;
    report.candidate = candidate.name();
    report.reference = reference.name();
    ReportBuilder builder(report);
    for (const TinyModel& tiny : tiny_models()) check_tiny_model(builder, tiny, candidate, reference);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

}  // namespace normlab
