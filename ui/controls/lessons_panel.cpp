// LessonsPanel widgets.
#include "ui/controls/lessons_panel.h"

#include <QFormLayout>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "engine/config/presets.h"

namespace normlab::ui {

LessonsPanel::LessonsPanel(QWidget* parent) : QWidget(parent), m_timing(new LessonTiming(this)) {
    auto* layout = new QVBoxLayout(this);
    m_list = new QListWidget;
    m_list->setObjectName(QStringLiteral("lessonList"));
    for (const Lesson& lesson : lessons()) m_list->addItem(lesson.title);
    m_text = new QTextBrowser;
    m_text->setOpenExternalLinks(false);
    auto* start = m_start = new QPushButton(tr("Start this lesson"));
    start->setObjectName(QStringLiteral("startLesson"));
    start->setDefault(true);
    m_seeds = new QSpinBox;
    m_seeds->setObjectName(QStringLiteral("lessonSeeds"));
    m_seeds->setRange(1, kMaxLessonSeeds);
    m_seeds->setToolTip(
        tr("Train each run of the lesson from this many seeds and draw their mean with a "
           "95% interval band (the lesson takes about that many times as long)"));
    auto* seedsRow = new QFormLayout;
    seedsRow->addRow(tr("Seeds per run:"), m_seeds);
    layout->addWidget(m_list, 2);
    layout->addWidget(m_text, 3);
    layout->addLayout(seedsRow);
    layout->addWidget(start);
    connect(m_seeds, &QSpinBox::valueChanged, this, [this] { showLesson(m_list->currentRow()); });
    connect(m_list, &QListWidget::currentRowChanged, this, &LessonsPanel::showLesson);
    connect(m_list, &QListWidget::itemActivated, this,
            [this] { emit lessonRequested(lessons().at(m_list->currentRow())); });
    connect(start, &QPushButton::clicked, this, [this] {
        if (m_list->currentRow() >= 0) emit lessonRequested(lessons().at(m_list->currentRow()));
    });
    m_list->setCurrentRow(0);
    connect(m_timing, &LessonTiming::measured, this, [this] {
        updateItems();
        showLesson(m_list->currentRow());
    });
    updateItems();
}

int LessonsPanel::seeds() const {
    return m_seeds->value();
}

void LessonsPanel::setSeeds(int seeds) {
    m_seeds->setValue(seeds);
}

void LessonsPanel::setMeasuringAllowed(bool allowed) {
    m_measuringAllowed = allowed;
    showLesson(m_list->currentRow());
}

void LessonsPanel::updateItems() {
    for (int row = 0; row < m_list->count(); ++row) {
        const Lesson& lesson = lessons()[row];
        const bool loaded = lesson.title == m_loaded;
        QListWidgetItem* item = m_list->item(row);
        QFont font = item->font();
        font.setBold(loaded);
        item->setFont(font);
        QString text = loaded ? tr("%1  (loaded)").arg(lesson.title) : lesson.title;
        // The time first, where a narrow list does not cut it off.
        if (const QString duration = m_timing->durationText(lesson, false); !duration.isEmpty())
            text = QStringLiteral("[%1]  %2").arg(duration, text);
        item->setText(text);
        item->setToolTip(m_timing->durationText(lesson));
    }
}

QString LessonsPanel::lengthHtml(const Lesson& lesson) const {
    const qsizetype runs = lesson.presets.size();
    const int seeds = m_seeds->value();
    QString html =
        (runs == 1 ? tr("<p><b>Length:</b> 1 run, ") : tr("<p><b>Length:</b> %1 runs, ").arg(runs)) +
        tr("%1 steps in all").arg(LessonTiming::lessonSteps(lesson));
    if (seeds > 1)
        html += tr(", each run from %1 seeds (%2 runs, %3 steps; the time below is for one seed)")
                    .arg(seeds)
                    .arg(runs * seeds)
                    .arg(LessonTiming::lessonSteps(lesson) * seeds);
    const QString duration = m_timing->durationText(lesson);
    if (!duration.isEmpty()) {
        QStringList rates;
        for (const QString& preset : lesson.presets)
            rates << tr("%1 %2 steps/s").arg(preset).arg(*m_timing->stepsPerSecond(preset), 0, 'g', 3);
        html += tr("; %1 at full speed (measured: %2)").arg(duration, rates.join(QStringLiteral(", ")));
    } else if (m_timing->measuring()) {
        html += tr("; timing this machine...");
    }
    return html + QStringLiteral("</p>");
}

void LessonsPanel::setLoadedLesson(const QString& title) {
    m_loaded = title;
    for (int row = 0; row < m_list->count(); ++row)
        if (lessons()[row].title == title) m_list->setCurrentRow(row);
    updateItems();
    showLesson(m_list->currentRow());
}

void LessonsPanel::selectLesson(const QString& title) {
    for (int row = 0; row < m_list->count(); ++row)
        if (lessons()[row].title == title) m_list->setCurrentRow(row);
}

QString LessonsPanel::shownLesson() const {
    const int row = m_list->currentRow();
    return row >= 0 ? lessons().at(row).title : QString();
}

void LessonsPanel::showLesson(int row) {
    if (row < 0) return;
    m_start->setText(lessons().at(row).title == m_loaded ? tr("Restart this lesson")
                                                         : tr("Start this lesson"));
    const Lesson& lesson = lessons().at(row);
    if (m_measuringAllowed) m_timing->measure(lesson.presets);
    QString html = QStringLiteral("<h3>%1</h3>%2%3<p><b>Runs:</b></p><ul>")
                       .arg(lesson.title, lengthHtml(lesson), lesson.watch);
    for (const QString& name : lesson.presets)
        for (const normlab::Preset& preset : normlab::presets())
            if (QString::fromStdString(preset.name) == name)
                html += QStringLiteral("<li><b>%1</b>: %2</li>")
                            .arg(name, QString::fromStdString(preset.summary).toHtmlEscaped());
    m_text->setHtml(html + QStringLiteral("</ul>"));
}

}  // namespace normlab::ui
