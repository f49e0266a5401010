// The Lessons panel: the list of lessons, what each shows and what to watch, and one button that
// loads its presets (as a comparison when there are several) and starts them.
#pragma once
#include <QWidget>

#include "ui/controls/lessons.h"

class QListWidget;
class QPushButton;
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

  signals:
    void lessonRequested(const normlab::ui::Lesson& lesson);

  private:
    void showLesson(int row);
    QListWidget* m_list = nullptr;
    QTextBrowser* m_text = nullptr;
    QPushButton* m_start = nullptr;
    QString m_loaded;
};

}  // namespace normlab::ui
