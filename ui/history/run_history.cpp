// Folding a RunUpdate into a run's bounded history.
#include "ui/history/run_history.h"

#include <algorithm>
#include <cmath>

#include "engine/core/not_recorded.h"

namespace normlab::ui {

QString gradientTensorName(GradientTensor tensor) {
    switch (tensor) {
        case GradientTensor::Total:
            return QStringLiteral("all matrices");
        case GradientTensor::Qkv:
            return QStringLiteral("w_qkv");
        case GradientTensor::AttnOut:
            return QStringLiteral("w_o");
        case GradientTensor::Ffn1:
            return QStringLiteral("w_1");
        case GradientTensor::Ffn2:
            return QStringLiteral("w_2");
    }
    return {};
}

double gradientOf(const BlockValues& g, GradientTensor tensor) {
    switch (tensor) {
        case GradientTensor::Total: {
            // over the matrices the block has (theory mode has no w_o); a NaN of a diverged one stays
            double squares = 0.0;
            bool any = false;
            for (const double norm : {g.w_qkv, g.w_o, g.w_1, g.w_2}) {
                if (!normlab::recorded(norm)) continue;
                squares += norm * norm;
                any = true;
            }
            return any ? std::sqrt(squares) : normlab::kNotRecorded;
        }
        case GradientTensor::Qkv:
            return g.w_qkv;
        case GradientTensor::AttnOut:
            return g.w_o;
        case GradientTensor::Ffn1:
            return g.w_1;
        case GradientTensor::Ffn2:
            return g.w_2;
    }
    return 0.0;
}

void RunHistory::absorb(const RunUpdate& update) {
    for (const normlab::StepRecord& record : update.records) absorbRecord(record);
    for (const normlab::Event& event : update.events) {
        events.push_back(event);
        if (events.size() > kMaxEvents) events.pop_front();
    }
    started = true;
    status = update.status;
    step = update.step;
    stepsPerSecond = update.stepsPerSecond;
    divergedAt = update.divergedAt;
    firstBadLayer = update.firstBadLayer;
    forkPoints = update.forkPoints;
    forkPointBytes = update.forkPointBytes;
}

void RunHistory::absorbRecord(const normlab::StepRecord& record) {
    const auto x = static_cast<double>(record.step);
    loss.append(x, record.loss);
    lr.append(x, record.lr);
    gradNorm.append(x, record.grad_norm);
    if (record.val_loss) valLoss.append(x, *record.val_loss);
    if (record.val_loss_batch_stats) valLossBatchStats.append(x, *record.val_loss_batch_stats);
    if (record.telemetry) {
        logZMean.append(x, record.telemetry->log_z_mean);
        outputLogitMean.append(x, record.telemetry->logit_mean);
        gradEmbedding.append(x, record.telemetry->grad_embedding);
        gradHead.append(x, record.telemetry->grad_head);
    }
    precision.absorb(x, record, kBlockSeriesCapacity);
    if (record.layers.empty()) return;
    ++loggedSteps;

    const size_t blocks = record.layers.size();
    for (auto* perBlock : {&updateRatio, &blockMaxLogit, &queryRms, &keyRms, &updateRms, &adamGradRms,
                           &adamEpsFraction, &contributionAttn, &contributionFfn}) {
        if (perBlock->size() != blocks) perBlock->assign(blocks, DecimatedSeries(kBlockSeriesCapacity));
    }
    std::vector<double> gradColumn(blocks), residColumn(blocks);
    double entropySum = 0.0, maxLogit = -INFINITY;
    for (size_t b = 0; b < blocks; ++b) {
        const normlab::LayerTelemetry& layer = record.layers[b];
        updateRatio[b].append(x, layer.update_ratio);
        blockMaxLogit[b].append(x, layer.attn_max_logit);  // steps without attention statistics: NaN, skipped
        queryRms[b].append(x, layer.q_rms);
        keyRms[b].append(x, layer.k_rms);
        updateRms[b].append(x, layer.update_rms);
        adamGradRms[b].append(x, layer.adam_grad_rms);
        adamEpsFraction[b].append(x, layer.adam_eps_fraction);  // not recorded: NaN, skipped
        contributionAttn[b].append(x, layer.contribution_attn);
        contributionFfn[b].append(x, layer.contribution_ffn);
        entropySum += layer.attn_entropy;
        maxLogit = std::max(maxLogit, layer.attn_max_logit);
        gradColumn[b] =
            gradientOf(BlockValues{layer.grad.w_qkv, layer.grad.w_o, layer.grad.w_1, layer.grad.w_2},
                       GradientTensor::Total);
        residColumn[b] = layer.resid;
    }
    absorbHeadLogits(x, record);
    normScales.absorb(x, record, kBlockSeriesCapacity);
    attnEntropyMean.append(x, entropySum / static_cast<double>(blocks));
    attnMaxLogit.append(x, maxLogit);
    gradHeat.append(x, std::move(gradColumn));
    residHeat.append(x, std::move(residColumn));
    profiles.absorb(record.step, record.layers);
}

void RunHistory::absorbHeadLogits(double x, const normlab::StepRecord& record) {
    const size_t blocks = record.layers.size();
    const size_t values = record.attn_head_max_logit.size();
    if (values == 0 || values % blocks != 0) return;  // a step without attention statistics
    headsPerBlock = static_cast<int>(values / blocks);
    if (headMaxLogit.size() != values) headMaxLogit.assign(values, DecimatedSeries(kHeadSeriesCapacity));
    for (size_t i = 0; i < values; ++i) headMaxLogit[i].append(x, record.attn_head_max_logit[i]);
}

void RunHistory::clearHistory() {
    // A fresh history that keeps only what the run is (name, config, folder, ...): a series added to the
    // struct is cleared with the rest without being listed here (a hand-kept list once missed one).
    RunHistory fresh;
    fresh.id = id;
    fresh.name = std::move(name);
    fresh.colour = colour;
    fresh.visible = visible;
    fresh.config = std::move(config);
    fresh.folder = std::move(folder);
    fresh.source = std::move(source);
    fresh.note = std::move(note);
    fresh.knownKeys = std::move(knownKeys);
    fresh.skippedLines = skippedLines;
    fresh.stale = stale;
    fresh.groupId = groupId;
    fresh.bands = std::move(bands);
    fresh.paused = paused;
    fresh.stepsPerSecond = stepsPerSecond;
    *this = std::move(fresh);
}

QString RunHistory::statusText() const {
    if (bands)
        return started ? bands->summary : QStringLiteral("%1 seeds, loading").arg(bands->members.size());
    if (!source.isEmpty()) {
        QString text = started ? QStringLiteral("%1, %2").arg(source, trainedStatusText())
                               : QStringLiteral("%1, loading").arg(source);
        if (stale) text += QStringLiteral(", stale (no news for a minute)");
        if (skippedLines > 0) text += QStringLiteral(", %1 lines skipped").arg(skippedLines);
        return text;
    }
    return trainedStatusText();
}

QString RunHistory::trainedStatusText() const {
    if (!started) return QStringLiteral("not started");
    if (status == normlab::RunStatus::Running && paused) return QStringLiteral("paused");
    if (status == normlab::RunStatus::Diverged) {
        QString text = QStringLiteral("diverged at step %1").arg(divergedAt);
        if (firstBadLayer >= 0) text += QStringLiteral(" (block %1)").arg(firstBadLayer);
        return text;
    }
    return QString::fromStdString(normlab::to_string(status));
}

}  // namespace normlab::ui
