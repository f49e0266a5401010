// Wording of run labels and export captions, kept in one place so charts, CSV and files agree.
#include "ui/panels/run_captions.h"

#include <QObject>
#include <QStringList>
#include <algorithm>

#include "engine/config/architecture_family.h"
#include "engine/config/config_diff.h"

namespace normlab::ui {

QString placementLabel(normlab::NormPlacement placement) {
    switch (placement) {
        case normlab::NormPlacement::Post:
            return QStringLiteral("Post-LN");
        case normlab::NormPlacement::Pre:
            return QStringLiteral("Pre-LN");
        case normlab::NormPlacement::Peri:
            return QStringLiteral("Peri-LN");
        case normlab::NormPlacement::None:
            return QStringLiteral("no norm");
        case normlab::NormPlacement::Mix:
            return QStringLiteral("Mix-LN");
    }
    return {};
}

QString configSummary(const normlab::Config& config, const QString& seeds) {
    const auto& m = config.model;
    const auto& t = config.train;
    QStringList parts;
    QString wiring = placementLabel(m.norm_placement);
    if (m.norm_placement != normlab::NormPlacement::None)
        wiring += QLatin1Char(' ') + QString::fromStdString(normlab::to_string(m.norm_type));
    if (m.residual != normlab::Residual::Plain)
        wiring += QLatin1Char(' ') + QString::fromStdString(normlab::to_string(m.residual));
    if (m.theory_mode) wiring += QStringLiteral(" (theory mode)");
    parts << wiring;
    parts << QString::fromStdString(normlab::architecture_family(m));
    parts << QStringLiteral("%1 blocks, d %2, %3 heads, seq %4")
                 .arg(m.layers)
                 .arg(m.d_model)
                 .arg(m.heads)
                 .arg(m.seq_len);
    parts << QStringLiteral("%1 lr %2")
                 .arg(QString::fromStdString(normlab::to_string(t.optimizer)))
                 .arg(t.lr, 0, 'g', 3);
    parts << (t.warmup_steps > 0 ? QStringLiteral("warmup %1").arg(t.warmup_steps)
                                 : QStringLiteral("no warmup"));
    if (t.schedule != normlab::ScheduleKind::Constant)
        parts << QString::fromStdString(normlab::to_string(t.schedule));
    if (t.precision != normlab::NumberFormat::Fp32 || t.loss_scale != "none")
        parts << QString::fromStdString(normlab::to_string(t.precision) +
                                        (t.loss_scale != "none" ? " loss scale " + t.loss_scale : ""));
    parts << QStringLiteral("batch %1, %2")
                 .arg(t.batch_size)
                 .arg(seeds.isEmpty() ? QStringLiteral("seed %1").arg(t.seed)
                                      : QStringLiteral("seeds ") + seeds);
    parts << QStringLiteral("task %1").arg(QString::fromStdString(normlab::to_string(config.data.task)));
    return parts.join(QStringLiteral(", "));
}

PlotSeries runSeries(const TelemetryStore& store, const RunHistory& run, const QString& what, bool primary,
                     QVector<QPointF> points) {
    int visible = 0;
    for (const auto& [id, other] : store.runs()) visible += other.visible && other.groupId < 0 ? 1 : 0;
    PlotSeries series;
    series.colour = run.colour;
    series.points = std::move(points);
    series.name = visible <= 1 ? what : primary ? run.name : run.name + QLatin1Char(' ') + what;
    series.inLegend = visible <= 1 || primary;
    if (run.bands)  // a seed group's line is its seeds' mean
        series.name = visible <= 1 ? what + QObject::tr(" (mean of %1 seeds)").arg(run.bands->members.size())
                      : primary    ? run.name + QObject::tr(" (mean)")
                                   : run.name + QLatin1Char(' ') + what;
    if (run.groupId >= 0) {  // one seed of a group, beside its mean: faint, thin, named by its entry
        series.colour.setAlpha(110);
        series.width = 0.8;
        series.inLegend = false;
        series.name = run.name + QLatin1Char(' ') + what;
    }
    return series;
}

QString runSummary(const RunHistory& run) {
    if (!run.knownKeys.empty()) {  // another writer: only the shape it gave
        const auto& m = run.config.model;
        return QStringLiteral("%1, %2 blocks, d %3, %4 heads")
            .arg(run.source.isEmpty() ? QStringLiteral("another writer") : run.source)
            .arg(m.layers)
            .arg(m.d_model)
            .arg(m.heads);
    }
    if (run.bands)  // a seed group: its shared config, its seeds and what its band is
        return configSummary(run.config, run.bands->seeds) +
               QStringLiteral("; mean and %1 over the seeds").arg(spreadName(run.bands->spread));
    if (!run.note.isEmpty()) return QStringLiteral("configuration unknown");  // config.json unread
    return configSummary(run.config);
}

std::map<int, QString> differencesByRun(const TelemetryStore& store) {
    std::vector<int> ids;
    std::vector<normlab::FlatConfig> configs;
    for (const auto& [id, run] : store.runs()) {
        if (!run.visible || run.groupId >= 0) continue;  // a group's seeds: its entry speaks for them
        ids.push_back(id);
        configs.push_back(normlab::flatten_config(run.config, run.knownKeys));
    }
    const std::vector<std::string> keys = normlab::differing_keys(configs);
    std::map<int, QString> out;
    for (size_t i = 0; i < ids.size() && !keys.empty(); ++i) {
        QStringList pairs;
        for (const std::string& key : keys)
            if (const auto value = configs[i].find(key); value != configs[i].end())
                pairs << QString::fromStdString(key + "=" + value->second);
        if (!pairs.isEmpty()) out[ids[i]] = pairs.join(QLatin1Char(' '));
    }
    return out;
}

QString liveChangesText(const RunHistory& run) {
    QStringList changes;
    for (const normlab::Event& event : run.events) {
        if (event.kind != "change") continue;
        QString value = QString::fromStdString(event.value);
        if (value.size() >= 2 && value.startsWith(QLatin1Char('"')) && value.endsWith(QLatin1Char('"')))
            value = value.mid(1, value.size() - 2);
        QString placement;
        for (const normlab::NormPlacement each :
             {normlab::NormPlacement::Post, normlab::NormPlacement::Pre, normlab::NormPlacement::Peri,
              normlab::NormPlacement::None, normlab::NormPlacement::Mix})
            if (event.key == "model.norm_placement" && value.toStdString() == normlab::to_string(each))
                placement = placementLabel(each);
        changes << (placement.isEmpty()
                        ? QStringLiteral("%1=%2 from step %3")
                              .arg(QString::fromStdString(event.key), value)
                              .arg(event.step)
                        : QStringLiteral("switched to %1 at step %2").arg(placement).arg(event.step));
    }
    return changes.join(QStringLiteral(", "));
}

QString captionForRuns(const TelemetryStore& store) {
    QStringList lines;
    for (const auto& [id, run] : store.runs()) {
        if (!run.visible || run.groupId >= 0) continue;
        const QString changes = liveChangesText(run);
        lines << QStringLiteral("%1: %2%3")
                     .arg(run.name, runSummary(run),
                          changes.isEmpty() ? QString() : QStringLiteral("; ") + changes);
    }
    // What the reader most wants to know: what differs between the runs shown, live changes included
    // (a fork starts with its parent's config and differs by what it switched to: a slide's one-line
    // caption is this line).
    const std::map<int, QString> differences = differencesByRun(store);
    std::map<int, QString> changes;  // visible runs' live changes, named only where they are not all alike
    for (const auto& [id, run] : store.runs())
        if (run.visible && run.groupId < 0) changes[id] = liveChangesText(run);
    const bool changesAlike = std::all_of(changes.begin(), changes.end(), [&](const auto& entry) {
        return entry.second == changes.begin()->second;
    });
    QStringList parts;
    for (const auto& [id, change] : changes) {
        QStringList own;
        if (const auto found = differences.find(id); found != differences.end()) own << found->second;
        if (!changesAlike && !change.isEmpty()) own << change;
        if (!own.isEmpty())
            parts << QStringLiteral("%1 %2").arg(store.runs().at(id).name, own.join(QStringLiteral(", ")));
    }
    if (changes.size() > 1 && !parts.isEmpty())
        lines.prepend(QStringLiteral("Differs: ") + parts.join(QStringLiteral("; ")));
    return lines.join(QLatin1Char('\n'));
}

}  // namespace normlab::ui
