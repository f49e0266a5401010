// The run configuration: one JSON document where every key has a default (see docs/config.md).
// Parsing rejects unknown keys and bad values with an InputError naming the key and what is accepted.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/core/number_formats.h"

namespace normlab {

// Mix: Mix-LN (Li et al. 2024), the first model.mix_post_fraction of the blocks Post-LN, the rest Pre-LN.
enum class NormPlacement { Post, Pre, Peri, None, Mix };
// BatchNorm and PowerNorm normalise each feature over the batch's rows (batch x positions) instead of each
// row over its features: feature norms (is_feature_norm), with running statistics for evaluation.
// PowerNorm (Shen et al. 2020): no centring, the running quadratic mean, an approximate backward.
enum class NormType { LayerNorm, RmsNorm, DyT, BatchNorm, PowerNorm };
inline bool is_feature_norm(NormType type) {
    return type == NormType::BatchNorm || type == NormType::PowerNorm;
}
// QK-norm: each head's queries and keys normalised over the head dimension before the dot product, with
// one learnable gain per head dimension shared by the heads and no bias (Wortsman et al. 2023).
enum class QkNorm { None, LayerNorm, RmsNorm };
// DeepNorm and Admin scale the shortcut of Post-LN; with other placements see wiring_note(). Lns
// (LayerNorm Scaling, Sun et al. 2025) scales block l's input norms' outputs by 1/sqrt(l); B2t (Takase
// et al. 2022) adds a Post-LN block's input to its last sum, before its last norm; ResiDual (Xie et al.
// 2023) keeps beside Post-LN's stream an unnormalised sum of every branch, normalised and added at the end;
// DenseFormer (Pagliardini et al. 2024) feeds each block a learned weighted average of the embeddings and
// every earlier block's output (model.denseformer_dilation); AttnRes (Attention Residuals, Kimi Team 2026)
// feeds each sub-layer a softmax-weighted average of the embeddings and every earlier sub-layer's
// branch, weighted by one learned pseudo-query per sub-layer.
enum class Residual { Plain, DeepNorm, ReZero, Admin, Lns, B2t, ResiDual, DenseFormer, AttnRes };
enum class Activation { Relu, Gelu, GeluTanh };
// The FFN: Mlp is fc2(activation(fc1 u)); the gated ones are fc2(act(gate u) * (fc1 u)) with act SiLU
// (SwiGLU) or GELU (GeGLU), both projections d_ff wide (Shazeer 2020).
enum class FeedForward { Mlp, SwiGlu, GeGlu };
// Position information: learned absolute embeddings added to the tokens (wpe), rotary embeddings on each
// head's q and k (RoPE, Su et al. 2021; Hugging Face Llama's rotate_half pairing), or none at all.
enum class Position { Learned, Rope, None };
enum class InitScheme { XavierNormal, XavierUniform, Gpt2 };
// How init, learning rates and multipliers change with width (and depth): standard (SP), muP (Yang et
// al. 2022) relative to model.base_width, or CompleteP (Dey et al. 2025: muP plus residual branches
// scaled base_depth / layers). Every multiplier: engine/model/parametrization.h, docs/model.md.
enum class Parametrization { Sp, Mup, CompleteP };
enum class AdminInit { Closed, Profiled };
enum class OptimizerKind { Sgd, Adam, AdamW, RAdam };
enum class ScheduleKind { Constant, Linear, InverseSqrt, Cosine, Noam };
// AdamW's decoupled decay per step: lr_t x weight_decay (LrCoupled, PyTorch's AdamW), or weight_decay x
// lr_t / train.lr, the schedule's factor only (Independent: Wortsman et al. 2023, as nanodo does it).
enum class WeightDecayMode { LrCoupled, Independent };
// What the model learns: byte-level text, or one of the synthetic sequence tasks (engine/data/).
enum class TaskKind { Text, Copy, Reverse, Sort, ModAdd };

struct ModelConfig {
    int d_model = 64;
    int layers = 6;
    int encoder_layers = 0;  // 0: decoder-only; else an encoder of that many blocks and cross-attention
    int heads = 4;
    int d_ff = 256;
    int seq_len = 32;
    NormPlacement norm_placement = NormPlacement::Pre;
    NormType norm_type = NormType::LayerNorm;
    Residual residual = Residual::Plain;
    Activation activation = Activation::Relu;
    InitScheme init = InitScheme::XavierNormal;
    bool theory_mode = false;     // Xiong et al.'s simplified model (see docs/science.md)
    double deepnorm_alpha = 0.0;  // 0: (2N)^(1/4) from the depth
    double deepnorm_beta = 0.0;   // 0: (8N)^(-1/4) from the depth
    AdminInit admin_init = AdminInit::Closed;
    double norm_eps = 1e-5;
    double embedding_std = 0.0;  // std of token and of position embeddings; 0: the init scheme's
    double dyt_alpha = 0.5;      // DyT: the initial alpha of tanh(alpha x) (the DyT paper: 1.0 for LLMs)
    // BatchNorm / PowerNorm: each training pass moves the running statistics this fraction of the way to
    // the batch's (PyTorch's momentum; PowerNorm's 1 - alpha), and PowerNorm's backward memory nu too.
    double bn_momentum = 0.1;
    QkNorm qk_norm = QkNorm::None;
    double mix_post_fraction = 0.25;  // Mix-LN: floor(fraction x blocks) Post-LN blocks first (per stack)
    // Norm-gain warmup: every norm's gain g acts as s g, s ramping linearly from norm_gain_warmup_start
    // at step 1 to 1 at step norm_gain_warmup_steps + 1 (0: off). NormLab's test of a claim without a
    // primary source (docs/model.md#norm-gain-and-residual-warmup).
    int norm_gain_warmup_steps = 0;
    double norm_gain_warmup_start = 0.1;
    // ProRes residual warmup (Chen et al. 2026): block l's branch (l = 1.. per stack) scaled by
    // min(1, t / (T l)) at step t, T = residual_warmup_steps (0: off).
    int residual_warmup_steps = 0;
    // DenseFormer's dilation k: block i's weighted average reads the outputs i, i - k, i - 2k, ... (the
    // embeddings are output 0); 1 reads them all.
    int denseformer_dilation = 1;
    // The architecture of current LLMs (docs/model.md#architecture-keys); the defaults are the 2020 model.
    bool bias = true;             // linear layers with biases (false: none, as Llama)
    bool tie_embeddings = false;  // the head's weight is the token embedding (wte.weight)
    FeedForward ffn = FeedForward::Mlp;
    Position position = Position::Learned;
    double rope_theta = 10000.0;  // RoPE's base: head dimension pair i turns by position x theta^(-2i/hd)
    // Grouped-query attention (Ainslie et al. 2023): self-attention's key and value heads, each shared by
    // heads / kv_heads query heads (0: as many as heads; it must divide heads; 1: multi-query).
    int kv_heads = 0;
    // The model's vocabulary (the rows of wte and the head): 0, the data's; larger leaves rows that no
    // batch uses, as an imported Hugging Face model's vocabulary does (docs/huggingface.md).
    int vocab_size = 0;
    Parametrization parametrization = Parametrization::Sp;
    int base_width = 0;  // muP's and CompleteP's base width (d_model where they equal SP); 0: d_model
    int base_depth = 0;  // CompleteP's base depth (blocks per stack where it equals muP); 0: layers
};

struct TrainConfig {
    OptimizerKind optimizer = OptimizerKind::Adam;
    double lr = 1e-3;
    int warmup_steps = 0;  // 0: no warmup
    ScheduleKind schedule = ScheduleKind::Constant;
    double clip_grad_norm = 0.0;  // 0: no clipping
    int batch_size = 16;
    int steps = 600;
    uint64_t seed = 1;
    double beta1 = 0.9;
    double beta2 = 0.98;
    double eps = 1e-8;
    double weight_decay = 0.0;  // decoupled for AdamW, L2 for the others; matrices only
    WeightDecayMode weight_decay_mode = WeightDecayMode::LrCoupled;  // AdamW only
    double z_loss = 0.0;  // z-loss coefficient: + z_loss (log Z)^2 per token (PaLM uses 1e-4); 0: off
    // Emulated mixed precision (docs/precision.md): the number format every matmul's input, weight and
    // output, its output's gradient and its weight gradient are rounded to; fp32 master weights,
    // optimizer state and everything between the matmuls.
    NumberFormat precision = NumberFormat::Fp32;
    // none | dynamic | a fixed factor (engine/config/loss_scale_spec.h): the loss's gradient multiplied
    // before backward, the parameters' gradients divided before the update.
    std::string loss_scale = "none";
    double momentum = 0.9;      // SGD
    double min_lr_ratio = 0.0;  // floor of linear / cosine decay, as a fraction of lr
    // A run whose training loss exceeds diverge_loss x ln(vocabulary) (a uniform guess's loss) ends
    // as diverged, so a blown-up run stops the same way in every build instead of training on at
    // 1e8; 0: only non-finite values end a run.
    double diverge_loss = 3.0;
    // Every checkpoint_every steps the run folder's checkpoint is replaced (atomically) by the run's
    // state then, so a crash or a spike can be resumed from shortly before it; 0: off.
    int checkpoint_every = 0;
    // How many checkpoints a run folder keeps: 1 (model.safetensors alone, replaced each time); K > 1
    // also keeps the last K as model-step-<N>.safetensors, to fork or resume from; 0 keeps them all.
    int checkpoint_keep = 1;
};

struct DataConfig {
    TaskKind task = TaskKind::Text;
    std::string text_path;  // empty: the corpus that ships in resources/
    // How the text task's text becomes tokens: "bytes", "bpe:N" or a SentencePiece .model file
    // (engine/config/tokenizer_spec.h; docs/model.md#tokenizers).
    std::string tokenizer = "bytes";
    double val_fraction = 0.1;  // held-out share of the text (or of the synthetic problem space seed)
    int symbols = 16;           // alphabet size of copy / reverse / sort
    int modulus = 97;           // p of modadd
};

struct TelemetryConfig {
    int every = 1;          // log metrics every N steps
    int val_every = 50;     // validation loss every N steps (0: never)
    int val_batches = 4;    // batches averaged for one validation loss
    int spike_window = 50;  // trailing window of the loss z-score
    double spike_z = 6.0;   // z-score above which a loss is a spike event
};

struct Config {
    ModelConfig model;
    TrainConfig train;
    DataConfig data;
    TelemetryConfig telemetry;
    std::string device = "auto";  // auto | cpu | cuda
    int threads = 0;              // 0: every core
};

// Parses a JSON document (a subset of keys is fine: the rest keep defaults). Throws InputError.
Config config_from_json_text(const std::string& json_text, const std::string& source_name);
Config config_from_file(const std::string& path);
nlohmann::json config_to_json(const Config& config);
std::string config_to_json_text(const Config& config);

// Applies "a.b=value" (value parsed as JSON when it is valid JSON, else as a string). Throws InputError.
void apply_override(Config& config, const std::string& assignment);

// Checks ranges and combinations (d_model % heads, sizes > 0, finite lr, threads <= kMaxThreads, ...).
// Throws InputError.
void validate(const Config& config);

// The most OpenMP threads a config may ask for (threads = 0 means every core).
inline constexpr int kMaxThreads = 1024;

// DeepNorm and Admin are Post-LN schemes (docs/science.md). Other placements are deliberately allowed (the
// model composes s = c x + a F for every wiring, live changes may switch placement mid-run, and the
// gradient tests cover every combination), so this is a note for the user, not an error: empty for the
// published wirings, else one line saying what the combination does and what to set instead.
std::string wiring_note(const ModelConfig& model);

// Every key as "a.b", for --help and error messages.
std::vector<std::string> config_keys();
// The strings a key accepts (an enum's names, device's), in the engine's order; empty
// for a key that takes numbers, booleans or any string. Throws InputError for an unknown key.
std::vector<std::string> config_key_choices(std::string_view key);

// Enum <-> string, as written in JSON.
std::string to_string(NormPlacement v);
std::string to_string(NormType v);
std::string to_string(QkNorm v);
std::string to_string(Residual v);
std::string to_string(Activation v);
std::string to_string(FeedForward v);
std::string to_string(Position v);
std::string to_string(InitScheme v);
std::string to_string(Parametrization v);
std::string to_string(AdminInit v);
std::string to_string(OptimizerKind v);
std::string to_string(ScheduleKind v);
std::string to_string(WeightDecayMode v);
std::string to_string(TaskKind v);
std::string to_string(NumberFormat v);

}  // namespace normlab
