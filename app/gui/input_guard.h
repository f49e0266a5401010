// Keys and the wheel as a lecturer expects them, whatever widget has focus: Space pauses or resumes
// (except in a text field, where it is text and Esc hands focus back to the charts), and the mouse
// wheel never changes a combo box or spin box that does not have focus (it scrolls the panel instead).
// One application-wide event filter, so every control, present or added later, behaves the same.
#pragma once
#include <QObject>

class QAction;
class QWidget;
class QWheelEvent;

namespace normlab::gui {

class InputGuard : public QObject {
    Q_OBJECT
  public:
    // `pause`: the action Space triggers; `home`: where Esc from a text field puts the focus.
    InputGuard(QAction* pause, QWidget* home, QObject* parent);
    bool eventFilter(QObject* watched, QEvent* event) override;

    // A widget where Space and Esc are the user's text: an editable line or text edit, or an editable
    // combo box (the tokenizer row); not a spin box's own line edit, which is a number.
    static bool isTextField(const QWidget* widget);

  private:
    bool forwardWheel(QWidget* control, QWheelEvent* event);

    QAction* m_pause;
    QWidget* m_home;
};

}  // namespace normlab::gui
