// Notices about a bad setting drawn over the settings form, never inserted into it: the message over
// the legend at the top and right under the field it is most about, a red outline round every field
// it names. Nothing in the form moves when they come and go (an inserted line once shifted the rows
// under the pointer, so the next click landed on another field); clicks pass through them.
#pragma once
#include <QObject>
#include <QString>
#include <QStringList>
#include <vector>

class QLabel;
class QWidget;

namespace normlab::ui {

class FieldNotices : public QObject {
    Q_OBJECT
  public:
    // Notices over `form` (their parent): the top one over `legend`, named `topName`.
    FieldNotices(QWidget* form, QWidget* legend, const QString& topName);
    // Setting `key`'s notice, drawn under `field` ("<key>.problem"), and its outline ("<key>.outline").
    void addField(const QString& key, QWidget* field);
    // Shows `problem` at the top and under the field of `keys`' first key (outlining each of them);
    // an empty problem hides them all.
    void show(const QString& problem, const QStringList& keys);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    struct Field {
        QString key;
        QWidget* field;
        QLabel* notice;
        QWidget* outline;
    };
    static QLabel* makeNotice(QWidget* form, const QString& name, bool bold);
    // Each shown notice under its anchor, as wide as the form, above everything else.
    void place();

    QWidget* m_form;
    QWidget* m_legend;
    QLabel* m_top;
    std::vector<Field> m_fields;
};

}  // namespace normlab::ui
