// The lessons: short guided experiments built from the presets, each saying what to watch. A lesson
// with several presets starts them side by side from the same seed (a comparison).
#pragma once
#include <QString>
#include <QStringList>
#include <vector>

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

}  // namespace normlab::ui
