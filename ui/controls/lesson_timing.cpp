// Measuring and remembering each preset's speed on this machine (lesson_timing.h).
#include "ui/controls/lesson_timing.h"

#include <QSettings>
#include <chrono>
#include <cmath>
#include <exception>

#include "engine/config/presets.h"
#include "engine/core/version.h"
#include "engine/train/trainer.h"

namespace normlab::ui {

namespace {
// One key per build and preset: another build (or version) measures again.
QString settingsKey(const QString& preset) {
    const QString build = QString::fromStdString(normlab::version_line()).simplified();
    return QStringLiteral("lessonTiming/%1/%2").arg(QString::number(qHash(build), 16), preset);
}

// Steps a second of `preset` at full speed (after a warm-up step), or 0 when it cannot train here.
double measurePreset(const QString& preset, const std::atomic<bool>& cancel) {
    try {
        normlab::Trainer trainer(normlab::preset_config(preset.toStdString()));
        trainer.step();  // first-touch allocations and caches
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < LessonTiming::kMeasuredSteps && !cancel; ++i) trainer.step();
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return seconds > 0.0 && !cancel ? LessonTiming::kMeasuredSteps / seconds : 0.0;
    } catch (const std::exception&) {
        return 0.0;  // too big for this machine, say: no estimate
    }
}
}  // namespace

LessonTiming::LessonTiming(QObject* parent) : QObject(parent) {}

LessonTiming::~LessonTiming() {
    m_cancel = true;
    if (m_thread) m_thread->wait();
    delete m_thread;
}

std::optional<double> LessonTiming::stepsPerSecond(const QString& preset) const {
    const QVariant value = QSettings().value(settingsKey(preset));
    if (!value.isValid()) return std::nullopt;
    const double rate = value.toDouble();
    return rate > 0.0 && std::isfinite(rate) ? std::optional<double>(rate) : std::nullopt;
}

long long LessonTiming::lessonSteps(const Lesson& lesson) {
    long long steps = 0;
    for (const QString& preset : lesson.presets)
        steps += normlab::preset_config(preset.toStdString()).train.steps;
    return steps;
}

std::optional<double> LessonTiming::lessonSeconds(const Lesson& lesson) const {
    double seconds = 0.0;
    for (const QString& preset : lesson.presets) {
        const std::optional<double> rate = stepsPerSecond(preset);
        if (!rate) return std::nullopt;
        seconds += normlab::preset_config(preset.toStdString()).train.steps / *rate;
    }
    return seconds;
}

QString LessonTiming::durationText(const Lesson& lesson, bool sentence) const {
    const std::optional<double> seconds = lessonSeconds(lesson);
    if (!seconds) return {};
    const QString time = *seconds < 90.0 ? tr("%1 s").arg(std::max(5.0, std::round(*seconds / 5.0) * 5.0))
                                         : tr("%1 min").arg(std::round(*seconds / 60.0));
    return sentence ? tr("about %1 here").arg(time) : time;
}

bool LessonTiming::measure(const QStringList& presets) {
    QStringList missing;
    for (const QString& preset : presets)
        if (!stepsPerSecond(preset) && !m_failed.contains(preset) && !missing.contains(preset))
            missing << preset;
    if (missing.isEmpty()) return false;
    if (m_thread) return true;
    // The thread ends before this object does (the destructor waits); a result queued to a gone
    // object is dropped with it.
    m_thread = QThread::create([missing, this] {
        for (const QString& preset : missing) {
            if (m_cancel) return;
            const double rate = measurePreset(preset, m_cancel);
            if (m_cancel) return;
            QMetaObject::invokeMethod(this, [this, preset, rate] { store(preset, rate); });
        }
    });
    connect(m_thread, &QThread::finished, this, [this] {
        m_thread->deleteLater();
        m_thread = nullptr;
    });
    m_thread->start(QThread::LowPriority);
    return true;
}

void LessonTiming::store(const QString& preset, double stepsPerSecond) {
    if (stepsPerSecond > 0.0)
        QSettings().setValue(settingsKey(preset), stepsPerSecond);
    else
        m_failed.insert(preset);  // not again in this session
    emit measured(preset);
}

}  // namespace normlab::ui
