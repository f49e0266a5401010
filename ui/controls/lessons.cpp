// The lesson table. Figures quoted are what these presets produce on the CPU backend (the measured table in
// docs/science.md#the-presets-measured; the live switch's recovery in docs/window.md#lessons).
#include "ui/controls/lessons.h"

#include "engine/config/presets.h"

namespace normlab::ui {

const std::vector<Lesson>& lessons() {
    static const std::vector<Lesson> table = {
        {QStringLiteral("Post-LN needs warmup; Pre-LN does not"),
         {"postln-no-warmup", "postln-warmup", "preln-no-warmup"},
         QStringLiteral(
             "<p>Three 6-block models at Adam lr 3e-3. <b>Loss</b>: Post-LN without warmup stalls near the "
             "unigram loss (about 3.0) while the same model with 150 warmup steps and the Pre-LN model reach "
             "about 1.5-1.7.</p><p><b>Gradient norm per block</b>: once Post-LN without warmup is stuck, its "
             "gradient falls by orders of magnitude from the last block to the first (the lower blocks stop "
             "learning); with warmup, and with Pre-LN, it stays within a "
             "factor of a few across blocks. The <b>heatmaps</b> show when that happens.</p>"
             "<p>Fix it live, keeping the stuck run: the lesson pauses at step 100. Select the Post-LN run "
             "in "
             "<i>Runs</i> and fork it (<i>Fork here</i>, Ctrl+K): the fork starts from its state at step 100 "
             "and sees the same batches. The fork is now the selected run: set <i>Norm placement</i> to pre "
             "and press Space. The stuck run goes on stuck beside its rescued fork: at step 600 the fork's "
             "validation loss is 1.77 (95% CI 1.66-1.88 over 5 seeds) against the stuck run's 3.05 "
             "(2.98-3.12); whether a later switch recovers less is inconclusive (1.94 at step 200 on one "
             "seed). Ticking <i>Warmup</i> "
             "once the run is stuck does not help (warmup has to "
             "come before the damage): tick it and press Restart (F5) instead.</p>"),
         false,
         100,
         QStringLiteral(
             "Paused at step 100: select postln-no-warmup in Runs, fork it (Ctrl+K), set Norm placement "
             "to pre, press Space")},
        {QStringLiteral("Depth: DeepNorm and ReZero train 48 blocks"),
         {"deep-postln", "deep-deepnorm", "deep-rezero"},
         QStringLiteral(
             "<p>48 narrow blocks. Plain Post-LN stalls (held-out loss 3.07, 95% CI 3.05-3.09 over 5 seeds); "
             "DeepNorm (alpha = (2N)^1/4 on the shortcut, beta = (8N)^-1/4 on the init) and ReZero (branches "
             "gated by a learned alpha that starts at 0) train (2.27, 1.71-2.83 and 2.33, "
             "2.28-2.38).</p><p><b>Update ratio</b>: DeepNorm keeps the per-block update small and "
             "even; <b>heatmaps</b> show where the gradient concentrates over time.</p>")},
        {QStringLiteral("Lemma 2: activation growth at initialisation"),
         {"theory-postln", "theory-preln"},
         QStringLiteral(
             "<p>Xiong et al.'s simplified model at initialisation (the block charts show step 1). "
             "<b>Activation norm per block</b>: Post-LN's residual sum stays at E||x||^2/d = 1.5 in every "
             "block; Pre-LN's grows linearly with depth inside the grey Lemma 2 band (1 + l/2 .. 1 + 3l/2). "
             "A norm of the growing sum divides the gradient by it: that is why Pre-LN's gradients shrink "
             "with depth. Switch <i>Show</i> to the newest step to see how training moves away from it. "
             "(Theory mode has no attention weights: its attention is uniform, so that chart is flat.)</p>"),
         true},
        {QStringLiteral("Warmup variants: linear, Noam, RAdam"),
         {"postln-warmup", "postln-noam", "postln-radam"},
         QStringLiteral(
             "<p>The same Post-LN model three ways: linear warmup, the Noam schedule (warmup then 1/sqrt(t) "
             "decay; the <b>learning rate</b> axis shows its shape), and RAdam without warmup, whose "
             "variance "
             "rectification acts as an automatic warmup. All three train.</p>")},
        {QStringLiteral("Peri-LN vs Pre-LN"),
         {"preln-no-warmup", "periln"},
         QStringLiteral(
             "<p>Peri-LN normalises each sub-layer's output as well as its input. Compare the "
             "<b>activation norm per block</b>: Pre-LN's residual stream grows with depth, Peri-LN's grows "
             "more slowly, with similar loss.</p>")},
        {QStringLiteral("Attention-logit growth: QK-norm"),
         {"logit-growth", "logit-growth-qknorm"},
         QStringLiteral(
             "<p>Two 4-block Pre-LN models at Adam lr 0.1, far above what they tolerate (Wortsman et al. "
             "2023's attention-logit growth). <b>Attention logits and q, k RMS per block</b> (pick the run): "
             "without QK-norm the queries and keys grow and the largest logit passes 1000 by step 40 and "
             "reaches 6.4e5 (95% CI 5.3e5-7.4e5 over 5 seeds); the <b>attention</b> chart's entropy falls to "
             "0 (each query attends to one key) and the held-out loss stalls at 2.69 (2.66-2.73). With "
             "QK-norm (each head's q and k normalised, a learnable gain) the queries grow just as much, but "
             "the largest logit stays at 27.6 (22.3-32.8) and the loss reaches 1.64 (1.57-1.72).</p><p>Fix "
             "it live: the lesson pauses at step 60. Select logit-growth in "
             "<i>Runs</i>, set <i>QK-norm</i> to layernorm and press Space: its logits fall back to the tens "
             "and its held-out loss ends at 1.62 (95% CI 1.57-1.67 over 5 seeds; switched at step 200: 1.98, "
             "1.93-2.02).</p>"),
         false,
         60,
         QStringLiteral(
             "Paused at step 60: select logit-growth in Runs, set QK-norm to layernorm, then press "
             "Space (switched now, it ends near 1.62 at step 800)")},
        {QStringLiteral("Output-logit drift: z-loss"),
         {"logit-drift", "logit-drift-zloss"},
         QStringLiteral(
             "<p>The QK-norm model at lr 0.3, without and with z-loss 1e-4 (PaLM; Wortsman et al. 2023). "
             "<b>Output logits</b>: the mean logit falls to about -16 while log Z, free to drift because a "
             "softmax ignores a shift, climbs to about 7 by step 800; z-loss holds it 0.83 nats lower (95% "
             "CI 0.15-1.50 over 5 seeds, paired) with the same loss. At this scale the output logits do "
             "not diverge, so z-loss has nothing to rescue: the published divergence needs larger models "
             "or longer runs. Raise <i>z-loss</i> to 1e-3 live and watch log Z fall.</p>")},
        {QStringLiteral("Mix-LN at depth"),
         {"deep-postln", "deep-preln", "deep-mixln"},
         QStringLiteral(
             "<p>48 blocks at Adam lr 1e-3: Post-LN, Pre-LN and Mix-LN (Li et al. 2024: the first quarter of "
             "the blocks Post-LN, the rest Pre-LN). Measured over 5 seeds (held-out loss, 95% CI): Post-LN "
             "stalls (3.07, 3.05-3.09), Pre-LN trains (2.31, 2.24-2.37), and Mix-LN with the paper's default "
             "25% stalls like Post-LN (3.07, 3.05-3.09): its 12 "
             "Post-LN blocks are already too deep a Post-LN stack for this learning rate. Set <i>Mix-LN Post "
             "fraction</i> to 0.0625 (the paper's 7B setting: 3 Post-LN blocks) and restart it: it trains to "
             "2.28 (2.16-2.40), level with Pre-LN. The <b>heatmaps</b> show where the gradient dies.</p>")},
        {QStringLiteral("Post-LN at depth: B2T and ResiDual"),
         {"deep-postln", "deep-b2t", "deep-resi-dual", "deep-preln"},
         QStringLiteral(
             "<p>48 Post-LN blocks at Adam lr 1e-3 without warmup, plain, with the B2T connection (each "
             "block's input added before its last norm) and with ResiDual (beside the stream an "
             "unnormalised sum of every branch, normalised and added at the end), against Pre-LN. Measured "
             "over 5 seeds (held-out loss, 95% CI): Post-LN stalls (3.07, 3.05-3.09) and B2T stalls with "
             "it (3.07); ResiDual trains (2.37, 2.33-2.41), 0.06 behind Pre-LN (2.31, 2.24-2.37; paired "
             "0.003-0.13). <b>Gradient norm per block</b>: Post-LN's FFN-output gradients vanish towards "
             "the first block (1.7e-12 at their smallest); B2T's skip lifts them about a thousandfold and "
             "they still vanish; ResiDual's dual stream hands every branch the output's gradient directly "
             "(smallest 5.3e-3, 4.1e-3-6.4e-3). The final norm's scale is the dual stream's 1/RMS: it "
             "grows like Pre-LN's stream. Set <i>Residual scheme</i> to resi_dual on the stalled Post-LN "
             "run (fork it first) and watch the lower blocks wake.</p>")},
        {QStringLiteral("PreNorm dilution: LayerNorm Scaling"),
         {"deep-preln", "deep-lns"},
         QStringLiteral(
             "<p>48 Pre-LN blocks at Adam lr 1e-3, with and without LayerNorm Scaling (Sun et al. 2025: each "
             "block's input norms divided by sqrt(l)). The <b>activation norm per block</b> is the dilution "
             "curve: Pre-LN's residual stream grows with depth, to E||h||^2/d = 821 (95% CI 695-948 over 5 "
             "seeds) at the last block by step 300; with LayerNorm Scaling 51 (48-55). In the <b>branch "
             "share</b> tab (behind the activation norm) each block's FFN adds 0.031 (0.025-0.037) of the "
             "stream it joins at the last block under Pre-LN, and less with the scaling, 0.019 "
             "(0.018-0.019): the deep blocks add a smaller share, not a larger one. The held-out loss is "
             "0.07 lower with the scaling (paired, 95% CI 0.04-0.10): 2.24 (2.19-2.28) against 2.31 "
             "(2.24-2.37). It has no parameters: set <i>Residual scheme</i> to lns on a running Pre-LN "
             "model and watch the stream shrink.</p>")},
        {QStringLiteral("PreNorm dilution: Attention Residuals"),
         {"deep-preln", "deep-attn-res"},
         QStringLiteral(
             "<p>48 Pre-LN blocks at Adam lr 1e-3, and the same blocks with Attention Residuals (Kimi Team "
             "2026): each sub-layer reads, instead of the running sum, a per-token softmax over depth of the "
             "embeddings and every earlier branch, weighted by a learned pseudo-query (zero at first: a "
             "plain "
             "average). The <b>activation norm per block</b> is the dilution curve: Pre-LN's stream reaches "
             "E||h||^2/d = 821 (95% CI 695-948 over 5 seeds) at the last block by step 300; the averages "
             "stay near 0.07 (0.06-0.08) at every depth. In the <b>branch share</b> tab the last block's FFN "
             "adds 0.031 (0.025-0.037) of the stream under Pre-LN and 3.6 times (3.0-4.2) the input it reads "
             "with Attention Residuals: late blocks are not diluted. The losses are level for about the "
             "first "
             "50 steps and part later; the held-out loss ends 0.08 lower "
             "(paired, 0.04-0.11): 2.23 (2.17-2.29) against 2.31 (2.24-2.37). It costs time: every average "
             "reads all earlier branches (about five times Pre-LN's step time on a 2-core CPU). Switched on "
             "live, the "
             "sums become averages at once, so fork the Pre-LN run first.</p>")},
        {QStringLiteral("Post-LN's better ending? A stable Post-LN against Pre-LN"),
         {"postln-warmup-long", "preln-warmup-long", "mid-deepnorm", "mid-preln"},
         QStringLiteral(
             "<p>Post-LN is said to train better than Pre-LN once it is stable. Two settings at equal steps "
             "and learning rate: 6 blocks at lr 3e-3 with 150 warmup steps for 1500 steps, Post-LN against "
             "Pre-LN; and 24 blocks at lr 1e-3 for 600 steps, Post-LN with DeepNorm against Pre-LN. Measured "
             "over 5 seeds (held-out loss, 95% CI): at 6 blocks Pre-LN ends <i>better</i>, 1.13 "
             "(1.07-1.19) against 1.23 (1.19-1.28), paired 0.07-0.14; at 24 blocks DeepNorm ends better, "
             "1.69 (1.64-1.75) against 1.87 (1.79-1.95), paired 0.11-0.24 lower. At 12 blocks and 1200 "
             "steps (not in the lesson) the two are level (1.30 against 1.31, paired -0.05 to +0.01), so "
             "the deep lead may be speed, not the ending. <b>Gradient norm per block</b> and <b>update "
             "ratio</b> show how DeepNorm keeps its deep stack evenly trained.</p>")},
        {QStringLiteral("fp16: headroom and underflowing gradients"),
         {"preln-no-warmup", "preln-fp16", "preln-fp16-unscaled"},
         QStringLiteral(
             "<p>The 6-block Pre-LN model in fp32, and in emulated fp16 (activations and weights rounded in "
             "every matmul, fp32 master weights) with and without a dynamic loss scale. In the "
             "<b>Precision</b> tab (behind the output logits) pick an fp16 run. <i>Stream headroom</i>: "
             "Pre-LN's growing residual stream comes nearest to fp16's 65504 of the lessons' models, yet "
             "keeps 10.3 doublings (95% CI 9.7-11.0, 3 seeds) at its least; no activation overflowed in any "
             "run. <i>Underflow share</i>: without a loss scale up to 0.74 (0.71-0.77) of the rounded "
             "gradients fall to zero or a subnormal; the dynamic scale (65536, never backed off) cuts it to "
             "0.013 (0.007-0.020). The held-out loss differs from fp32's by no measurable amount in either "
             "(every interval holds 0): at this scale and 600 steps fp16 costs nothing visible. Set "
             "<i>Loss scale</i> live on the unscaled run and watch the underflow fall.</p>")},
        {QStringLiteral("BatchNorm in a language model: batch size and the train/eval gap"),
         {"preln-batch32", "batchnorm-batch32", "preln-batch2", "batchnorm-batch2"},
         QStringLiteral(
             "<p>The 6-block Pre-LN model with LayerNorm and with BatchNorm (each feature normalised over "
             "the batch's tokens while training, over running statistics at validation), at batch 32 and "
             "batch 2. <b>Loss</b>: the dashed line is the held-out loss on the running statistics, the "
             "dash-dotted one the same batches on their own statistics, as in training: BatchNorm's "
             "train/eval gap. It is widest early and with small batches (step 50: 0.47, 95% CI 0.18-0.76, "
             "at batch 2 against 0.19, 0.10-0.27, at batch 32; 5 seeds) and nearly closes by step 600 "
             "(0.028 and 0.004; at batch 1, 0.083). At the end BatchNorm trails LayerNorm at batch 32 "
             "(held-out 1.45 against 1.29, paired 0.15 worse, 0.09-0.22) and at batch 1 (0.07, "
             "0.008-0.14), not measurably at batch 8 or 2. Try <i>Norm type</i> powernorm on a fork: "
             "PowerNorm, as the paper's algorithm without its authors' warmup, ends 0.75 (0.69-0.82) behind "
             "LayerNorm at batch 32.</p>")},
        {QStringLiteral("Norm-gain and residual warmup vs lr warmup"),
         {"postln-no-warmup", "postln-warmup", "postln-gain-warmup", "postln-residual-warmup"},
         QStringLiteral(
             "<p>Does warming up the model instead of the learning rate rescue Post-LN? Four 6-block Post-LN "
             "models at lr 3e-3: no warmup, 150 steps of lr warmup, every norm's gain ramped from 0.1 to 1 "
             "over 150 steps (a claim NormLab's sources make without a primary source), and ProRes residual "
             "warmup (block l's branch ramped over 25 l steps). Measured over 5 seeds (held-out loss, 95% "
             "CI): only the lr warmup trains (1.75, 1.66-1.84); both model warmups stall with the unwarmed "
             "run at 3.07 (3.04-3.09). Watch the "
             "<b>gradient norm per block</b>: the model warmups do not stop the lower blocks' gradient from "
             "collapsing.</p>")},
        {QStringLiteral("Quickstart: a healthy run"),
         {"quickstart"},
         QStringLiteral(
             "<p>A 4-block Pre-LN byte-level language model on the shipped corpus: loss falls from ln 256 "
             "(5.5) to about 2.2 in 300 steps. Pause (Space), single-step (F10), and change the learning "
             "rate live.</p>")},
    };
    return table;
}

std::vector<ExperimentRun> lessonRuns(const Lesson& lesson, int seeds) {
    std::vector<ExperimentRun> runs;
    for (const QString& preset : lesson.presets) {
        const normlab::Config config = normlab::preset_config(preset.toStdString());
        if (seeds <= 1) {
            runs.push_back({preset, config, true, {}, {}, {}});
            continue;
        }
        for (int k = 0; k < seeds; ++k) {
            ExperimentRun run{{}, config, true, {}, {}, preset};
            run.config.train.seed = config.train.seed + static_cast<uint64_t>(k);
            run.name = QStringLiteral("%1 seed %2").arg(preset).arg(run.config.train.seed);
            runs.push_back(std::move(run));
        }
    }
    return runs;
}

}  // namespace normlab::ui
