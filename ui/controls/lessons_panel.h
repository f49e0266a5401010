// The Lessons panel: the list of lessons with how long each takes here, what each shows and what to
// watch, a seed count, and one button that loads its presets (as a comparison when there are several,
// each a seed group with more than one seed) and starts them.
#pragma once
#include <QWidget>

#include "ui/controls/lesson_timing.h"
#include "ui/controls/lessons.h"

class QListWidget;
class QPushButton;
class QSpinBox;
class QTextBrowser;

namespace normlab::ui {

class LessonsPanel : public QWidget {
    Q_OBJECT
  public:
    explicit LessonsPanel(QWidget* parent = nullptr);
    // Marks the lesson whose runs are loaded (shown selected, its title marked, the button saying
    // "Restart"); an empty title: no lesson is loaded (the list stays for browsing, nothing marked).
    void setLoadedLesson(const QString& title);
    QString loadedLesson() const { return m_loaded; }
    // Shows a lesson's text without loading it (a replayed recording of it); unknown titles: nothing.
    void selectLesson(const QString& title);
    QString shownLesson() const;  // the title of the lesson whose text shows
    // While allowed (nothing trains), the shown lesson's presets are timed on this machine once, so
    // that the list and the text say how long the lesson takes here (LessonTiming).
    void setMeasuringAllowed(bool allowed);
    LessonTiming& timing() { return *m_timing; }
    // How many seeds each preset of a lesson trains from (1..kMaxLessonSeeds; default 1).
    int seeds() const;
    void setSeeds(int seeds);

  signals:
    void lessonRequested(const normlab::ui::Lesson& lesson);

  private:
    void showLesson(int row);
    void updateItems();                              // titles, "(loaded)" and durations
    QString lengthHtml(const Lesson& lesson) const;  // steps, runs and the time here
    QListWidget* m_list = nullptr;
    QTextBrowser* m_text = nullptr;
    QPushButton* m_start = nullptr;
    QSpinBox* m_seeds = nullptr;
    QString m_loaded;
    LessonTiming* m_timing = nullptr;
    bool m_measuringAllowed = false;
};

}  // namespace normlab::ui
