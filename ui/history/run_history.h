// Everything the charts know about one run: bounded, decimated scalar series, per-block series,
// per-block profiles (first, newest and kept steps between), heatmap columns, and its events (markers).
#pragma once
#include <QColor>
#include <QString>
#include <deque>
#include <optional>
#include <vector>

#include "engine/config/config.h"
#include "ui/history/block_profiles.h"
#include "ui/history/decimated_series.h"
#include "ui/history/heatmap_history.h"
#include "ui/history/norm_scale_history.h"
#include "ui/history/precision_history.h"
#include "ui/history/run_update.h"
#include "ui/history/seed_bands.h"

namespace normlab::ui {

// Which per-block gradient the block charts show.
enum class GradientTensor { Total, Qkv, AttnOut, Ffn1, Ffn2 };
QString gradientTensorName(GradientTensor tensor);
double gradientOf(const BlockValues& block, GradientTensor tensor);

struct RunHistory {
    static constexpr size_t kMaxEvents = 2000;
    // Buckets of each per-block series: as many as the heatmaps' columns, a quarter of the run-level
    // series'. With 48 blocks at 4096 each, twenty opened runs held 220 MB in these alone.
    static constexpr int kBlockSeriesCapacity = 1024;
    // Per-head series are blocks x heads of them (768 at 48 blocks of 16 heads): fewer buckets each.
    static constexpr int kHeadSeriesCapacity = 256;

    int id = -1;
    QString name;
    QColor colour;
    bool visible = true;
    normlab::Config config;
    QString folder;  // its run folder on disk
    QString source;  // empty: trained in this window; "opened": a run folder opened from disk
    QString note;    // what could not be read (an opened folder's foreign config, say)
    std::vector<std::string> knownKeys;  // another writer's run: the config keys it gave (else all)
    int64_t skippedLines = 0;            // an opened folder's lines that were not valid records
    bool stale = false;                  // an opened folder says "running" but its writer has gone quiet
    int groupId = -1;                    // a seed group's member: the group entry's id
    std::optional<SeedBands> bands;      // a seed group's entry: its band and members (its line: the mean)

    normlab::RunStatus status = normlab::RunStatus::Running;
    bool started = false;  // an update from the engine has arrived
    bool paused = false;   // the engine thread is paused (set by the window)
    int64_t step = 0;
    int64_t loggedSteps = 0;  // steps absorbed with per-block telemetry (what the per-block charts draw)
    double stepsPerSecond = 0.0;
    int64_t divergedAt = -1;
    int firstBadLayer = -1;
    std::vector<int64_t> forkPoints;  // a trained run's states kept for forks (steps), and their memory
    size_t forkPointBytes = 0;

    DecimatedSeries loss, valLoss, lr, gradNorm;
    DecimatedSeries valLossBatchStats;  // BatchNorm / PowerNorm: validation on the batches' own statistics
    DecimatedSeries attnEntropyMean, attnMaxLogit;  // mean entropy / largest logit over blocks
    DecimatedSeries logZMean, outputLogitMean;      // the output logits' log Z and mean (logged steps)
    DecimatedSeries gradEmbedding, gradHead;   // the embeddings' and the head's gradient norms (logged steps)
    std::vector<DecimatedSeries> updateRatio;  // per block
    // per block, on steps with attention statistics: the largest logit and the queries' and keys' RMS
    std::vector<DecimatedSeries> blockMaxLogit, queryRms, keyRms;
    // per block: the optimizer's state; the share of coordinates whose Adam sqrt(v) is below epsilon
    // (not recorded under SGD)
    std::vector<DecimatedSeries> updateRms, adamGradRms, adamEpsFraction;
    // per block: each sub-layer's contribution share ||a F(x)|| / ||x|| (attention, FFN)
    std::vector<DecimatedSeries> contributionAttn, contributionFfn;
    NormScaleHistory normScales;  // every norm's mean per-token scale 1/std, by family
    PrecisionHistory precision;   // emulated precision's overflow, underflow, headroom and loss scale
    // [block * headsPerBlock + head], on steps with attention statistics: each head's largest logit
    std::vector<DecimatedSeries> headMaxLogit;
    int headsPerBlock = 0;
    BlockProfiles profiles;  // per-block values at the first, the newest and kept steps between
    HeatmapHistory gradHeat, residHeat;
    std::deque<normlab::Event> events;  // newest kMaxEvents

    void absorb(const RunUpdate& update);
    // Forgets every step (the run starts again): the fields above `status` and `paused` stay.
    void clearHistory();
    // "completed", "diverged at step 37 (block 0)", ...; opened runs say so ("opened, completed").
    QString statusText() const;

  private:
    QString trainedStatusText() const;
    void absorbRecord(const normlab::StepRecord& record);
    void absorbHeadLogits(double x, const normlab::StepRecord& record);
};

}  // namespace normlab::ui
