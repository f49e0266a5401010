// The lessons' table: every lesson names presets that exist and validate (a typo would only show when a
// lecturer clicks it), at least one, no two lessons with the same title, and a pause has its text; and
// the lesson tables of README.md and docs/window.md list the same lessons, in order, with their presets;
// a lesson's time here is measured once, remembered, and is the sum of its runs' steps over their rates.
#include <QFile>
#include <QListWidget>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QTextBrowser>

#include "engine/config/config.h"
#include "engine/config/presets.h"
#include "ui/controls/lesson_timing.h"
#include "ui/controls/lessons.h"
#include "ui/controls/lessons_panel.h"

class LessonsTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void everyLessonsPresetsExistAndValidate();
    void aLessonsTimeIsMeasuredOnceAndRemembered();
    void titlesAreUniqueAndPausesSayWhatToDo();
    void theDocsTablesListTheLessonsAndTheirPresets_data();
    void theDocsTablesListTheLessonsAndTheirPresets();
};

namespace {
// The rows of the markdown table under "| lesson | runs | what it shows |": (lesson, runs) cells.
QList<QStringList> lessonRows(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
    const QStringList lines = QString::fromUtf8(file.readAll()).split('\n');
    QList<QStringList> rows;
    const qsizetype header = lines.indexOf(QStringLiteral("| lesson | runs | what it shows |"));
    for (qsizetype i = header + 2; header >= 0 && i < lines.size() && lines[i].startsWith('|'); ++i) {
        const QStringList cells = lines[i].split(QStringLiteral(" | "));
        rows.append({cells.value(0).mid(2), cells.value(1)});
    }
    return rows;
}
}  // namespace

void LessonsTest::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // settings in a test location, cleared here
    QCoreApplication::setOrganizationName(QStringLiteral("NormLabTest"));
    QCoreApplication::setApplicationName(QStringLiteral("lessons"));
    QSettings().clear();
}

void LessonsTest::aLessonsTimeIsMeasuredOnceAndRemembered() {
    using normlab::ui::LessonTiming;
    const normlab::ui::Lesson& lesson = normlab::ui::lessons().front();
    normlab::ui::LessonsPanel panel;
    auto* list = panel.findChild<QListWidget*>(QStringLiteral("lessonList"));
    auto* text = panel.findChild<QTextBrowser*>();
    QVERIFY(!panel.timing().lessonSeconds(lesson));
    QVERIFY(!list->item(0)->text().contains(QStringLiteral("here")));
    QVERIFY2(text->toPlainText().contains(
                 QStringLiteral("%1 steps in all").arg(LessonTiming::lessonSteps(lesson))),
             qPrintable(text->toPlainText()));

    QSignalSpy measured(&panel.timing(), &LessonTiming::measured);
    panel.setMeasuringAllowed(true);  // measures the lesson shown (the first)
    QVERIFY(panel.timing().measuring());
    QVERIFY(QTest::qWaitFor([&] { return measured.count() == lesson.presets.size(); }, 120000));
    double seconds = 0.0;
    for (const QString& preset : lesson.presets) {
        const std::optional<double> rate = panel.timing().stepsPerSecond(preset);
        QVERIFY2(rate && *rate > 0.0, qPrintable(preset));
        seconds += normlab::preset_config(preset.toStdString()).train.steps / *rate;
    }
    QCOMPARE(*panel.timing().lessonSeconds(lesson), seconds);
    const QString duration = panel.timing().durationText(lesson);
    QVERIFY2(duration.startsWith(QStringLiteral("about ")) && duration.endsWith(QStringLiteral(" here")),
             qPrintable(duration));
    QVERIFY2(list->item(0)->text().startsWith(
                 QStringLiteral("[%1]").arg(panel.timing().durationText(lesson, false))),
             qPrintable(list->item(0)->text()));
    QVERIFY2(text->toPlainText().contains(duration), qPrintable(text->toPlainText()));

    // Remembered: another panel (a new window) knows it without measuring again.
    LessonTiming again;
    QCOMPARE(*again.lessonSeconds(lesson), seconds);
    QVERIFY(!again.measure(lesson.presets));
    QVERIFY(!again.measuring());
}

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

void LessonsTest::theDocsTablesListTheLessonsAndTheirPresets_data() {
    QTest::addColumn<QString>("path");
    const QString root = QStringLiteral(NORMLAB_TEST_DATA_DIR "/../..");
    QTest::newRow("README.md") << root + QStringLiteral("/README.md");
    QTest::newRow("docs/window.md") << root + QStringLiteral("/docs/window.md");
}

// A row names its lesson by a prefix of the title (what `normlab --lesson` takes) and lists its presets.
void LessonsTest::theDocsTablesListTheLessonsAndTheirPresets() {
    QFETCH(QString, path);
    const QList<QStringList> rows = lessonRows(path);
    const auto& lessons = normlab::ui::lessons();
    QCOMPARE(rows.size(), qsizetype(lessons.size()));
    for (size_t i = 0; i < lessons.size(); ++i) {
        const QStringList& row = rows[static_cast<qsizetype>(i)];
        QVERIFY2(lessons[i].title.startsWith(row[0]),
                 qPrintable(row[0] + QStringLiteral(" vs ") + lessons[i].title));
        QCOMPARE(row[1], lessons[i].presets.join(QStringLiteral(", ")));
    }
}

QTEST_MAIN(LessonsTest)
#include "test_lessons.moc"
