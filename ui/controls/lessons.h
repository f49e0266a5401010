// The lessons: short guided experiments built from the presets, each saying what to watch. A lesson
// with several presets starts them side by side from the same seed (a comparison).
#pragma once
#include <QString>
#include <QStringList>
#include <vector>

#include "ui/experiment/experiment_file.h"

namespace normlab::ui {

struct Lesson {
    QString title;
    QStringList presets;            // started together, in this order
    QString watch;                  // what to look at (rich text)
    bool atInitialisation = false;  // the block charts show step 1 (the lesson is about init)
    int pauseAtStep = 0;            // > 0: training pauses once there, and pauseText says what to do
    QString pauseText;
};

const std::vector<Lesson>& lessons();

// A lesson's seeds (the Lessons panel's Seeds box, normlab --lesson-seeds): each of its presets trained
// from this many seeds, drawn as their mean with a band. 1 is today's single run per preset.
inline constexpr int kMaxLessonSeeds = 10;

// The runs a lesson starts: one per preset, or with `seeds` > 1 one per preset and seed (the preset's
// train.seed, then the next seeds), named "PRESET seed N" and grouped under the preset's name.
std::vector<ExperimentRun> lessonRuns(const Lesson& lesson, int seeds);

}  // namespace normlab::ui
