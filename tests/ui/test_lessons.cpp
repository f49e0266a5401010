// The lessons' table: every lesson names presets that exist and validate (a typo would only show when a
// lecturer clicks it), at least one, no two lessons with the same title, and a pause has its text.
#include <QSet>
#include <QTest>

#include "engine/config/config.h"
#include "engine/config/presets.h"
#include "ui/controls/lessons.h"

class LessonsTest : public QObject {
    Q_OBJECT
  private slots:
    void everyLessonsPresetsExistAndValidate();
    void titlesAreUniqueAndPausesSayWhatToDo();
};

void LessonsTest::everyLessonsPresetsExistAndValidate() {
    QVERIFY(!normlab::ui::lessons().empty());
    for (const normlab::ui::Lesson& lesson : normlab::ui::lessons()) {
        QVERIFY2(!lesson.presets.isEmpty(), qPrintable(lesson.title));
        for (const QString& preset : lesson.presets) {
            try {
                normlab::validate(normlab::preset_config(preset.toStdString()));
            } catch (const std::exception& error) {
                QFAIL(qPrintable(lesson.title + QStringLiteral(": preset ") + preset + QStringLiteral(": ") +
                                 QString::fromUtf8(error.what())));
            }
        }
    }
}

void LessonsTest::titlesAreUniqueAndPausesSayWhatToDo() {
    QSet<QString> titles;
    for (const normlab::ui::Lesson& lesson : normlab::ui::lessons()) {
        QVERIFY2(!titles.contains(lesson.title), qPrintable(lesson.title));
        titles.insert(lesson.title);
        QVERIFY2(!lesson.watch.isEmpty(), qPrintable(lesson.title));
        if (lesson.pauseAtStep > 0) QVERIFY2(!lesson.pauseText.isEmpty(), qPrintable(lesson.title));
    }
}

QTEST_MAIN(LessonsTest)
#include "test_lessons.moc"
