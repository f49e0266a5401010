// The Lessons panel: the list of lessons, what each shows and what to watch, and one button that
// loads its presets (as a comparison when there are several) and starts them.
#pragma once
#include <QWidget>

#include "ui/controls/lessons.h"

class QListWidget;
class QTextBrowser;

namespace normlab::ui {

class LessonsPanel : public QWidget {
    Q_OBJECT
  public:
    explicit LessonsPanel(QWidget* parent = nullptr);
    // Shows the lesson with this title (when a lesson starts from elsewhere: menu, command line).
    void showLessonTitled(const QString& title);

  signals:
    void lessonRequested(const normlab::ui::Lesson& lesson);

  private:
    void showLesson(int row);
    QListWidget* m_list = nullptr;
    QTextBrowser* m_text = nullptr;
};

}  // namespace normlab::ui
