// The preset table (measured in docs/science.md#the-presets-measured). Models follow the small-scale
// reference figures of docs/science.md: byte-level LM on the shipped corpus, Adam (0.9, 0.98), Xavier
// normal, ReLU FFN with d_ff = 4d, 4 heads, seq 32, batch 16.
#include "engine/config/presets.h"

#include "engine/core/errors.h"

namespace normlab {

namespace {
std::vector<std::string> six_blocks(const std::string& placement, const std::string& lr, int warmup) {
    return {"model.layers=6", "model.d_model=64",
            "model.d_ff=256", "model.norm_placement=" + placement,
            "train.lr=" + lr, "train.warmup_steps=" + std::to_string(warmup),
            "train.steps=600"};
}

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& extra) {
    base.insert(base.end(), extra.begin(), extra.end());
    return base;
}

std::vector<std::string> deep_stack(const std::string& placement, const std::string& residual) {
    return {"model.layers=48",
            "model.d_model=64",
            "model.d_ff=256",
            "model.norm_placement=" + placement,
            "model.residual=" + residual,
            "train.lr=1e-3",
            "train.steps=300",
            "telemetry.every=5"};
}

// The attention-logit-growth setting of Wortsman et al. (2023) at laptop scale: Pre-LN, Adam (0.9, 0.95),
// clipping at 1, 50 warmup steps then cosine decay, a learning rate far above what the model tolerates.
std::vector<std::string> logit_growth(const std::string& qk_norm, const std::string& lr = "0.1") {
    return {"model.layers=4",        "model.d_model=128",        "model.d_ff=512",
            "model.seq_len=64",      "model.norm_placement=pre", "model.qk_norm=" + qk_norm,
            "train.lr=" + lr,        "train.beta2=0.95",         "train.clip_grad_norm=1",
            "train.warmup_steps=50", "train.schedule=cosine",    "train.steps=800",
            "telemetry.every=10"};
}

// Today's decoder shapes at laptop scale: 4 Pre-LN blocks of width 64, AdamW with warmup and cosine decay.
std::vector<std::string> modern(const std::vector<std::string>& shape) {
    return with(
        {"model.layers=4", "model.d_model=64", "model.norm_placement=pre", "model.tie_embeddings=true",
         "train.optimizer=adamw", "train.beta2=0.95", "train.weight_decay=0.1", "train.lr=3e-3",
         "train.warmup_steps=30", "train.schedule=cosine", "train.steps=300"},
        shape);
}

std::vector<std::string> theory(const std::string& placement) {
    return {"model.theory_mode=true",
            "model.layers=6",
            "model.d_model=128",
            "model.seq_len=8",
            "model.norm_placement=" + placement,
            "train.steps=200"};
}
}  // namespace

const std::vector<Preset>& presets() {
    static const std::vector<Preset> table = {
        {"quickstart",
         "a 4-block Pre-LN byte-level LM on the shipped corpus: a first healthy run",
         {"model.layers=4", "train.steps=300"}},
        {"postln-no-warmup", "Post-LN, Adam at lr 3e-3 without warmup: gets stuck near the unigram loss",
         six_blocks("post", "3e-3", 0)},
        {"postln-warmup", "the same Post-LN model and lr with 150 warmup steps: trains",
         six_blocks("post", "3e-3", 150)},
        {"preln-no-warmup", "the same model as Pre-LN without warmup: trains as well as Post-LN with warmup",
         six_blocks("pre", "3e-3", 0)},
        {"postln-noam", "the same Post-LN model with the Noam schedule (warmup 150, peak lr 3e-3): trains",
         with(six_blocks("post", "0.2939", 150), {"train.schedule=noam"})},
        {"postln-radam",
         "the same Post-LN model, RAdam (betas 0.9, 0.999), no warmup: the rectification acts as a warmup "
         "and "
         "it trains (Adam with these betas stays stuck)",
         with(six_blocks("post", "3e-3", 0), {"train.optimizer=radam", "train.beta2=0.999"})},
        {"postln-gain-warmup",
         "the same Post-LN model and lr, no lr warmup, every norm's gain ramped from 0.1 g to g over 150 "
         "steps "
         "(a claim without a primary source)",
         with(six_blocks("post", "3e-3", 0), {"model.norm_gain_warmup_steps=150"})},
        {"postln-residual-warmup",
         "the same Post-LN model and lr, no lr warmup, ProRes residual warmup (block l's branch ramped over "
         "25 l "
         "steps)",
         with(six_blocks("post", "3e-3", 0), {"model.residual_warmup_steps=25"})},
        {"periln", "Peri-LN (norms around each sub-layer) at the same lr: trains, balanced residual growth",
         six_blocks("peri", "3e-3", 0)},
        {"preln-batch32", "preln-no-warmup at batch size 32 (512 tokens a step): LayerNorm's reference",
         with(six_blocks("pre", "3e-3", 0), {"train.batch_size=32"})},
        {"batchnorm-batch32",
         "the same model with BatchNorm (each feature over the batch's 512 tokens; running statistics for "
         "validation)",
         with(six_blocks("pre", "3e-3", 0), {"model.norm_type=batchnorm", "train.batch_size=32"})},
        {"preln-batch2", "preln-no-warmup at batch size 2 (64 tokens a step)",
         with(six_blocks("pre", "3e-3", 0), {"train.batch_size=2"})},
        {"batchnorm-batch2", "the same model with BatchNorm at batch size 2: statistics of 64 tokens",
         with(six_blocks("pre", "3e-3", 0), {"model.norm_type=batchnorm", "train.batch_size=2"})},
        {"preln-fp16", "preln-no-warmup in emulated fp16 with a dynamic loss scale (GradScaler's rules)",
         with(six_blocks("pre", "3e-3", 0), {"train.precision=fp16", "train.loss_scale=dynamic"})},
        {"preln-fp16-unscaled", "preln-no-warmup in emulated fp16 without a loss scale: gradients underflow",
         with(six_blocks("pre", "3e-3", 0), {"train.precision=fp16"})},
        {"postln-warmup-long", "postln-warmup trained 1500 steps: does a stable Post-LN end better?",
         with(six_blocks("post", "3e-3", 150), {"train.steps=1500"})},
        {"preln-warmup-long", "the same model as Pre-LN with the same warmup, 1500 steps",
         with(six_blocks("pre", "3e-3", 150), {"train.steps=1500"})},
        {"deep-postln", "48-block Post-LN: depth alone stalls training", deep_stack("post", "plain")},
        {"deep-deepnorm", "48-block Post-LN with DeepNorm (alpha shortcut, beta init): trains",
         deep_stack("post", "deepnorm")},
        {"deep-rezero", "48 blocks without norms, ReZero residuals: trains", deep_stack("none", "rezero")},
        {"mid-deepnorm", "24-block Post-LN with DeepNorm, 600 steps at lr 1e-3",
         with(deep_stack("post", "deepnorm"), {"model.layers=24", "train.steps=600"})},
        {"mid-preln", "24-block Pre-LN, 600 steps at lr 1e-3",
         with(deep_stack("pre", "plain"), {"model.layers=24", "train.steps=600"})},
        {"deep-preln", "48-block Pre-LN at the same lr: depth alone does not stall it",
         deep_stack("pre", "plain")},
        {"deep-b2t",
         "48 blocks of Post-LN with the B2T connection (each block's input added before its last norm; "
         "Takase et al. 2022)",
         deep_stack("post", "b2t")},
        {"deep-resi-dual",
         "48 blocks of Post-LN with ResiDual (an unnormalised sum of every branch beside the stream, "
         "normalised and added at the end; Xie et al. 2023)",
         deep_stack("post", "resi_dual")},
        {"deep-denseformer",
         "48 blocks of Pre-LN with DenseFormer (after each block a learned average of the embeddings and "
         "every earlier block's output; Pagliardini et al. 2024)",
         deep_stack("pre", "denseformer")},
        {"deep-attn-res",
         "48 blocks of Pre-LN with Attention Residuals (each sub-layer reads a learned softmax over depth of "
         "the "
         "embeddings and every earlier branch; Kimi Team 2026)",
         deep_stack("pre", "attn_res")},
        {"deep-lns",
         "48 blocks of Pre-LN with LayerNorm Scaling (block l's input norms x 1/sqrt(l); Sun et al. 2025): "
         "the hidden state grows less with depth",
         deep_stack("pre", "lns")},
        {"deep-mixln",
         "48 blocks of Mix-LN (the first 12 Post-LN, the rest Pre-LN; Li et al. 2024): Post-LN's early "
         "blocks "
         "without its stall",
         deep_stack("mix", "plain")},
        {"logit-growth",
         "Pre-LN at Adam lr 0.1 (warmup, cosine, clip 1): attention logits grow to ~1e5 and attention "
         "collapses to one key while the loss stalls",
         logit_growth("none")},
        {"logit-growth-qknorm",
         "the same model and lr with QK-norm: the largest logit stays in the tens and the model trains",
         logit_growth("layernorm")},
        {"logit-drift",
         "the QK-norm model at lr 0.3: trains, while the output logits' log Z drifts up (about 7 by step "
         "800)",
         logit_growth("layernorm", "0.3")},
        {"logit-drift-zloss",
         "the same with z-loss 1e-4: log Z drifts about 1 nat less, the loss is unchanged",
         with(logit_growth("layernorm", "0.3"), {"train.z_loss=1e-4"})},
        {"gpt2-shape",
         "GPT-2's shape at laptop scale: learned positions, GELU MLP, biases, LayerNorm, tied head",
         modern({"model.d_ff=256", "model.activation=gelu", "model.init=gpt2"})},
        {"llama-small",
         "a Llama-shaped model at laptop scale: RoPE, SwiGLU, RMSNorm, no biases, tied head, 2 KV heads of 4",
         modern({"model.d_ff=176", "model.ffn=swiglu", "model.norm_type=rmsnorm", "model.position=rope",
                 "model.bias=false", "model.kv_heads=2"})},
        {"theory-postln", "Xiong et al.'s simplified Post-LN model: E||x||^2/d = 1.5 in every block",
         theory("post")},
        {"theory-preln", "Xiong et al.'s simplified Pre-LN model: E||x_l||^2/d grows linearly with l",
         theory("pre")},
        {"theory-encdec-postln",
         "the simplified Post-LN model as a 6 + 6 encoder-decoder (Figure 3's setting): at initialisation "
         "the decoder's W2 gradient grows with the block index",
         with(theory("post"), {"model.encoder_layers=6"})},
        {"theory-encdec-preln",
         "the same encoder-decoder with Pre-LN: the decoder's W2 gradient varies far less (it falls about "
         "1.5x towards the output)",
         with(theory("pre"), {"model.encoder_layers=6"})},
    };
    return table;
}

Config preset_config(const std::string& name) {
    for (const Preset& preset : presets()) {
        if (preset.name != name) continue;
        Config config;
        for (const std::string& assignment : preset.overrides) apply_override(config, assignment);
        return config;
    }
    std::string names;
    for (const Preset& preset : presets()) names += (names.empty() ? "" : ", ") + preset.name;
    throw InputError("unknown preset '" + name + "'; presets are: " + names + " (see `normlab-cli presets`)");
}

}  // namespace normlab
