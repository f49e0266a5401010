// LessonsPanel widgets.
#include "ui/controls/lessons_panel.h"

#include <QListWidget>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "engine/config/presets.h"

namespace normlab::ui {

LessonsPanel::LessonsPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    m_list = new QListWidget;
    m_list->setObjectName(QStringLiteral("lessonList"));
    for (const Lesson& lesson : lessons()) m_list->addItem(lesson.title);
    m_text = new QTextBrowser;
    m_text->setOpenExternalLinks(false);
    auto* start = new QPushButton(tr("Start this lesson"));
    start->setObjectName(QStringLiteral("startLesson"));
    start->setDefault(true);
    layout->addWidget(m_list, 2);
    layout->addWidget(m_text, 3);
    layout->addWidget(start);
    connect(m_list, &QListWidget::currentRowChanged, this, &LessonsPanel::showLesson);
    connect(m_list, &QListWidget::itemActivated, this,
            [this] { emit lessonRequested(lessons().at(m_list->currentRow())); });
    connect(start, &QPushButton::clicked, this, [this] {
        if (m_list->currentRow() >= 0) emit lessonRequested(lessons().at(m_list->currentRow()));
    });
    m_list->setCurrentRow(0);
}

void LessonsPanel::showLessonTitled(const QString& title) {
    for (size_t row = 0; row < lessons().size(); ++row)
        if (lessons()[row].title == title) m_list->setCurrentRow(static_cast<int>(row));
}

void LessonsPanel::showLesson(int row) {
    if (row < 0) return;
    const Lesson& lesson = lessons().at(row);
    QString html = QStringLiteral("<h3>%1</h3>%2<p><b>Runs:</b></p><ul>").arg(lesson.title, lesson.watch);
    for (const QString& name : lesson.presets)
        for (const normlab::Preset& preset : normlab::presets())
            if (QString::fromStdString(preset.name) == name)
                html += QStringLiteral("<li><b>%1</b>: %2</li>")
                            .arg(name, QString::fromStdString(preset.summary).toHtmlEscaped());
    m_text->setHtml(html + QStringLiteral("</ul>"));
}

}  // namespace normlab::ui
