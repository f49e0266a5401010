// FieldNotices: labels parented to the form but outside its layout, placed from their anchors'
// geometry whenever the form is resized or laid out again.
#include "ui/controls/field_notices.h"

#include <QEvent>
#include <QLabel>
#include <QRect>
#include <QWidget>
#include <algorithm>

namespace normlab::ui {

namespace {
constexpr int kMargin = 4;  // from the form's sides
}  // namespace

FieldNotices::FieldNotices(QWidget* form, QWidget* legend, const QString& topName)
    : QObject(form), m_form(form), m_legend(legend), m_top(makeNotice(form, topName, true)) {
    form->installEventFilter(this);
}

QLabel* FieldNotices::makeNotice(QWidget* form, const QString& name, bool bold) {
    auto* notice = new QLabel(form);
    notice->setObjectName(name);
    notice->setWordWrap(true);
    notice->setAttribute(Qt::WA_TransparentForMouseEvents);
    notice->setStyleSheet(
        QStringLiteral("QLabel { color: #b00020; background: #fff3f3; border: 1px solid #b00020; "
                       "border-radius: 3px; padding: 2px 4px; %1 }")
            .arg(bold ? QStringLiteral("font-weight: bold;") : QString()));
    notice->hide();
    return notice;
}

void FieldNotices::addField(const QString& key, QWidget* field) {
    auto* outline = new QWidget(m_form);
    outline->setObjectName(key + QStringLiteral(".outline"));
    outline->setAttribute(Qt::WA_TransparentForMouseEvents);
    outline->setAttribute(Qt::WA_StyledBackground);
    outline->setStyleSheet(
        QStringLiteral("QWidget { background: transparent; border: 2px solid #b00020; "
                       "border-radius: 3px; }"));
    outline->hide();
    m_fields.push_back({key, field, makeNotice(m_form, key + QStringLiteral(".problem"), false), outline});
}

void FieldNotices::show(const QString& problem, const QStringList& keys) {
    m_top->setText(problem);
    m_top->setVisible(!problem.isEmpty());
    // One message under a field (one per named field covered the next field named); outlines for all.
    const QString first = problem.isEmpty() || keys.isEmpty() ? QString() : keys.front();
    for (const Field& field : m_fields) {
        const bool named = !problem.isEmpty() && keys.contains(field.key) && field.field->isVisibleTo(m_form);
        field.notice->setText(named && field.key == first ? problem : QString());
        field.notice->setVisible(named && field.key == first);
        field.outline->setVisible(named);
    }
    place();
}

void FieldNotices::place() {
    // As wide as the form's visible part (in a scroll area the form can be wider than its viewport).
    const QWidget* view = m_form->parentWidget();
    const int width = (view ? std::min(m_form->width(), view->width()) : m_form->width()) - 2 * kMargin;
    if (width <= 0) return;
    const auto put = [&](QLabel* notice, int top) {
        notice->setGeometry(kMargin, top, width, notice->heightForWidth(width));
        notice->raise();
    };
    if (m_top->isVisible()) put(m_top, m_legend->mapTo(m_form, QPoint(0, 0)).y());
    for (const Field& field : m_fields) {
        const QPoint at = field.field->mapTo(m_form, QPoint(0, 0));
        if (field.outline->isVisible()) {
            field.outline->setGeometry(QRect(at, field.field->size()).adjusted(-2, -2, 2, 2));
            field.outline->raise();
        }
        if (field.notice->isVisible()) put(field.notice, at.y() + field.field->height() + 1);
    }
}

bool FieldNotices::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_form && (event->type() == QEvent::Resize || event->type() == QEvent::LayoutRequest ||
                              event->type() == QEvent::Show))
        place();
    return QObject::eventFilter(watched, event);
}

}  // namespace normlab::ui
