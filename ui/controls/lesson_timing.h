// How long a lesson takes on this machine: each preset's steps a second, measured once per build,
// preset and machine (a warm-up step, then kMeasuredSteps timed, in a background thread) and kept in
// QSettings; a lesson's time is the sum over its runs of steps / rate (the engine steps runs in turn).
#pragma once
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QThread>
#include <atomic>
#include <optional>

#include "ui/controls/lessons.h"

namespace normlab::ui {

class LessonTiming : public QObject {
    Q_OBJECT
  public:
    static constexpr int kMeasuredSteps = 4;

    explicit LessonTiming(QObject* parent = nullptr);
    ~LessonTiming() override;  // a measurement under way stops after its current step

    // The preset's measured steps a second on this machine and build, if measured.
    std::optional<double> stepsPerSecond(const QString& preset) const;
    // Training steps of a lesson's runs together (each preset's train.steps).
    static long long lessonSteps(const Lesson& lesson);
    // Seconds at full speed: sum over its runs of steps / rate; nothing until every run is measured.
    std::optional<double> lessonSeconds(const Lesson& lesson) const;
    // "about 3 min here" / "about 40 s here" (short: "3 min" / "40 s"), or "" until measured.
    QString durationText(const Lesson& lesson, bool sentence = true) const;
    // Measures the presets not yet measured, one background thread at a time (a call while one runs
    // queues nothing: call again after measured()). False when every one is known already.
    bool measure(const QStringList& presets);
    bool measuring() const { return m_thread != nullptr; }

  signals:
    void measured(const QString& preset);

  private:
    void store(const QString& preset, double stepsPerSecond);
    QThread* m_thread = nullptr;
    QSet<QString> m_failed;  // presets that could not train here
    std::atomic<bool> m_cancel{false};
};

}  // namespace normlab::ui
