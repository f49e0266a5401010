// What the engine thread sends the GUI for one run, by value: the records and events since the
// last update plus the run's state. A TelemetryBatch carries updates of every compared run.
#pragma once
#include <QMetaType>
#include <QString>
#include <cstdint>
#include <vector>

#include "engine/train/telemetry.h"

namespace normlab::ui {

struct RunUpdate {
    int runId = -1;
    std::vector<normlab::StepRecord> records;  // every step since the last update, in order
    std::vector<normlab::Event> events;
    normlab::RunStatus status = normlab::RunStatus::Running;
    int64_t step = 0;
    double stepsPerSecond = 0.0;
    int64_t divergedAt = -1;
    int firstBadLayer = -1;
    std::vector<int64_t> forkPoints;  // a trained run's states kept in memory for forks, by step
    size_t forkPointBytes = 0;        // and their memory
};

struct TelemetryBatch {
    std::vector<RunUpdate> runs;
    int experiment = 0;  // the window's experiment it belongs to (TrainingWorker::setExperiment)
};

}  // namespace normlab::ui

Q_DECLARE_METATYPE(normlab::ui::TelemetryBatch)
