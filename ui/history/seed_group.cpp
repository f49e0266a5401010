// SeedGroupRecords: the members' records merged by step, each step's mean record and loss band, the
// members' events (one marker for an event every member had), and the group's status in words.
#include "ui/history/seed_group.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "engine/analysis/record_mean.h"
#include "engine/stats/student_t.h"

namespace normlab::ui {

QString spreadName(Spread spread) {
    return spread == Spread::Sd ? QStringLiteral("sd") : QStringLiteral("95% CI");
}

QString seedListText(const std::vector<uint64_t>& seeds) {
    bool consecutive = seeds.size() > 2;
    for (size_t i = 1; i < seeds.size(); ++i) consecutive = consecutive && seeds[i] == seeds[i - 1] + 1;
    if (consecutive) return QStringLiteral("%1-%2").arg(seeds.front()).arg(seeds.back());
    QStringList parts;
    for (uint64_t seed : seeds) parts << QString::number(seed);
    return parts.join(QStringLiteral(", "));
}

namespace {
// Half the band's width for values with sample sd `sd` over n >= 2 seeds.
class HalfWidth {
  public:
    explicit HalfWidth(Spread spread) : m_spread(spread) {}
    double operator()(double sd, size_t n) {
        if (m_spread == Spread::Sd) return sd;
        auto [t, added] = m_quantiles.try_emplace(n, 0.0);
        if (added) t->second = normlab::stats::student_t_quantile(0.975, static_cast<double>(n - 1));
        return t->second * sd / std::sqrt(static_cast<double>(n));
    }

  private:
    Spread m_spread;
    std::map<size_t, double> m_quantiles;  // by n: one bisection per group size, not per step
};

// Appends the band of `values` at step x, where at least two are finite; how many were (0 when none
// was appended).
int appendBand(const std::vector<double>& values, double x, HalfWidth& halfWidth, DecimatedSeries& low,
               DecimatedSeries& high) {
    double sum = 0.0, squares = 0.0;
    size_t n = 0;
    for (double v : values)
        if (std::isfinite(v)) sum += v, ++n;
    if (n < 2) return 0;
    const double mean = sum / static_cast<double>(n);
    for (double v : values)
        if (std::isfinite(v)) squares += (v - mean) * (v - mean);
    const double half = halfWidth(std::sqrt(squares / static_cast<double>(n - 1)), n);
    low.append(x, mean - half);
    high.append(x, mean + half);
    return static_cast<int>(n);
}

QString groupSummary(const std::vector<const RunHistory*>& members, size_t expected) {
    int completed = 0, running = 0, paused = 0, stopped = 0, loading = 0;
    QStringList diverged;
    for (const RunHistory* run : members) {
        if (!run->started)
            ++loading;
        else if (run->status == normlab::RunStatus::Running)
            ++(run->paused ? paused : running);
        else if (run->status == normlab::RunStatus::Completed)
            ++completed;
        else if (run->status == normlab::RunStatus::Stopped)
            ++stopped;
        else
            diverged << QString::number(run->divergedAt);
    }
    QStringList parts;
    if (completed > 0) parts << QStringLiteral("%1 completed").arg(completed);
    if (!diverged.isEmpty())
        parts << QStringLiteral("%1 diverged (step %2)")
                     .arg(diverged.size())
                     .arg(diverged.join(QStringLiteral(", ")));
    if (stopped > 0) parts << QStringLiteral("%1 stopped").arg(stopped);
    if (running > 0) parts << QStringLiteral("%1 running").arg(running);
    if (paused > 0) parts << QStringLiteral("%1 paused").arg(paused);
    if (loading > 0) parts << QStringLiteral("%1 loading").arg(loading);
    if (expected > members.size())
        parts << QStringLiteral("%1 not started yet").arg(expected - members.size());
    return QStringLiteral("%1 seeds: %2")
        .arg(std::max(expected, members.size()))
        .arg(parts.join(QStringLiteral(", ")));
}
}  // namespace

void SeedGroupRecords::absorb(const RunUpdate& update) {
    auto& records = m_records[update.runId];
    records.insert(records.end(), update.records.begin(), update.records.end());
    auto& events = m_events[update.runId];
    events.insert(events.end(), update.events.begin(), update.events.end());
}

void SeedGroupRecords::copyMember(const SeedGroupRecords& source, int from, int to) {
    if (const auto records = source.m_records.find(from); records != source.m_records.end())
        m_records[to] = records->second;
    if (const auto events = source.m_events.find(from); events != source.m_events.end())
        m_events[to] = events->second;
}

void SeedGroupRecords::restart(int memberId) {
    m_records.erase(memberId);
    m_events.erase(memberId);
}

void SeedGroupRecords::rebuild(RunHistory& group, const std::map<int, RunHistory>& runs) const {
    SeedBands bands = std::move(*group.bands);
    bands.lossLow.clear(), bands.lossHigh.clear(), bands.valLow.clear(), bands.valHigh.clear();
    bands.seedsLogged = 0;
    bands.seedsFewest = 0;
    std::vector<const RunHistory*> members;
    std::map<int64_t, std::vector<const normlab::StepRecord*>> bySteps;
    for (int id : bands.members) {
        if (const auto run = runs.find(id); run != runs.end()) members.push_back(&run->second);
        const auto records = m_records.find(id);
        if (records == m_records.end()) continue;
        // One record per member and step (its newest), and only real steps (1 on): a member counts once.
        std::map<int64_t, const normlab::StepRecord*> own;
        for (const normlab::StepRecord& record : records->second)
            if (record.step >= 1) own[record.step] = &record;
        for (const auto& [step, record] : own) bySteps[step].push_back(record);
    }
    RunUpdate update;
    update.runId = group.id;
    HalfWidth halfWidth(bands.spread);
    for (const auto& [step, records] : bySteps) {
        update.records.push_back(normlab::mean_record(records));
        const auto x = static_cast<double>(step);
        std::vector<double> losses, validation;
        for (const normlab::StepRecord* record : records) {
            losses.push_back(record->loss);
            validation.push_back(record->val_loss.value_or(NAN));
        }
        // The seeds behind the training-loss band here: those with a finite loss (a diverged one is not).
        const int seeds = appendBand(losses, x, halfWidth, bands.lossLow, bands.lossHigh);
        appendBand(validation, x, halfWidth, bands.valLow, bands.valHigh);
        bands.seedsLogged = std::max(bands.seedsLogged, seeds);
        if (seeds >= 2)
            bands.seedsFewest = bands.seedsFewest == 0 ? seeds : std::min(bands.seedsFewest, seeds);
    }
    update.events = mergedEvents(members);
    bool anyRunning = false, allDiverged = !members.empty();
    for (const RunHistory* run : members) {
        update.step = std::max(update.step, run->step);
        anyRunning = anyRunning || !run->started || run->status == normlab::RunStatus::Running;
        allDiverged = allDiverged && run->status == normlab::RunStatus::Diverged;
        if (run->divergedAt >= 0 && (update.divergedAt < 0 || run->divergedAt < update.divergedAt))
            update.divergedAt = run->divergedAt;
    }
    // Seeds group.json names that have no folder yet (a group still training) keep it running.
    anyRunning = anyRunning || bands.expected > members.size();
    update.status = anyRunning    ? normlab::RunStatus::Running
                    : allDiverged ? normlab::RunStatus::Diverged
                                  : normlab::RunStatus::Completed;
    if (!allDiverged) update.divergedAt = -1;
    bands.summary = groupSummary(members, bands.expected);
    group.clearHistory();
    group.absorb(update);
    group.bands = std::move(bands);
}

std::vector<normlab::Event> SeedGroupRecords::mergedEvents(
    const std::vector<const RunHistory*>& members) const {
    // An event every member had (a lesson's change at the same step) is one marker; others name the seed.
    using Key = std::tuple<int64_t, std::string, std::string, std::string, std::string, int>;
    std::map<Key, std::vector<const RunHistory*>> seen;
    for (const RunHistory* run : members)
        if (const auto events = m_events.find(run->id); events != m_events.end())
            for (const normlab::Event& e : events->second)
                seen[Key{e.step, e.kind, e.message, e.key, e.value, e.block}].push_back(run);
    std::vector<normlab::Event> merged;
    for (const auto& [key, runsWithIt] : seen) {
        const auto& [step, kind, message, configKey, value, block] = key;
        normlab::Event event{step, kind, message, configKey, value, block};
        if (runsWithIt.size() == members.size()) {
            merged.push_back(event);
            continue;
        }
        for (const RunHistory* run : runsWithIt) {
            merged.push_back(event);
            merged.back().message = run->name.toStdString() + ": " + message;
        }
    }
    return merged;
}

}  // namespace normlab::ui
