// InputGuard: application-wide Space, Esc and wheel handling (see input_guard.h).
#include "app/gui/input_guard.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QKeyEvent>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTextEdit>
#include <QWheelEvent>

namespace normlab::gui {

InputGuard::InputGuard(QAction* pause, QWidget* home, QObject* parent)
    : QObject(parent), m_pause(pause), m_home(home) {}

bool InputGuard::isTextField(const QWidget* widget) {
    if (!widget) return false;
    if (const auto* line = qobject_cast<const QLineEdit*>(widget))
        return !line->isReadOnly() && !qobject_cast<const QAbstractSpinBox*>(widget->parentWidget());
    if (const auto* combo = qobject_cast<const QComboBox*>(widget)) return combo->isEditable();  // typed into
    if (const auto* text = qobject_cast<const QTextEdit*>(widget)) return !text->isReadOnly();
    if (const auto* plain = qobject_cast<const QPlainTextEdit*>(widget)) return !plain->isReadOnly();
    return false;
}

bool InputGuard::forwardWheel(QWidget* control, QWheelEvent* event) {
    // The panel around the control scrolls as if the control were not there.
    for (QWidget* parent = control->parentWidget(); parent; parent = parent->parentWidget())
        if (auto* area = qobject_cast<QAbstractScrollArea*>(parent)) {
            QWheelEvent copy(area->viewport()->mapFromGlobal(event->globalPosition()),
                             event->globalPosition(), event->pixelDelta(), event->angleDelta(),
                             event->buttons(), event->modifiers(), event->phase(), event->inverted());
            QCoreApplication::sendEvent(area->viewport(), &copy);
            break;
        }
    return true;
}

bool InputGuard::eventFilter(QObject* watched, QEvent* event) {
    auto* widget = qobject_cast<QWidget*>(watched);
    if (!widget) return false;
    // An editable combo box's line edit stands for the combo box, which holds the focus.
    if (auto* combo = qobject_cast<QComboBox*>(widget->parentWidget()); combo && combo->lineEdit() == widget)
        widget = combo;
    if (event->type() == QEvent::Wheel) {
        const bool control = qobject_cast<QComboBox*>(widget) || qobject_cast<QAbstractSpinBox*>(widget);
        if (control && !widget->hasFocus()) return forwardWheel(widget, static_cast<QWheelEvent*>(event));
        return false;
    }
    if (event->type() != QEvent::ShortcutOverride && event->type() != QEvent::KeyPress) return false;
    const auto* key = static_cast<QKeyEvent*>(event);
    if (key->modifiers() != Qt::NoModifier || widget != QApplication::focusWidget()) return false;
    if (isTextField(widget)) {
        if (key->key() != Qt::Key_Escape || event->type() != QEvent::KeyPress) return false;
        if (m_home) m_home->setFocus(Qt::ShortcutFocusReason);
        return true;
    }
    if (key->key() != Qt::Key_Space) return false;
    // Space is claimed from the shortcut system (accepting the override delivers it as a key press
    // here, once, whatever the widget) and pauses or resumes instead of clicking a button, ticking a
    // box, opening a combo box or searching a list.
    event->accept();
    if (event->type() == QEvent::KeyPress && m_pause->isEnabled()) m_pause->trigger();
    return true;
}

}  // namespace normlab::gui
