// The lessons: short guided experiments built from the presets, each saying what to watch. A lesson
// with several presets starts them side by side from the same seed (a comparison).
#pragma once
#include <QString>
#include <QStringList>
#include <vector>

namespace normlab::ui {

struct Lesson {
    QString title;
    QStringList presets;  // started together, in this order
    QString watch;        // what to look at (rich text)
};

const std::vector<Lesson>& lessons();

}  // namespace normlab::ui
