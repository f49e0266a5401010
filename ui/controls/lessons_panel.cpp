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
    auto* start = m_start = new QPushButton(tr("Start this lesson"));
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

void LessonsPanel::setLoadedLesson(const QString& title) {
    m_loaded = title;
    for (int row = 0; row < m_list->count(); ++row) {
        QListWidgetItem* item = m_list->item(row);
        const bool loaded = lessons()[row].title == title;
        QFont font = item->font();
        font.setBold(loaded);
        item->setFont(font);
        item->setText(loaded ? QStringLiteral("%1  (loaded)").arg(lessons()[row].title)
                             : lessons()[row].title);
        if (loaded) m_list->setCurrentRow(row);
    }
    showLesson(m_list->currentRow());
}

void LessonsPanel::showLesson(int row) {
    if (row < 0) return;
    m_start->setText(lessons().at(row).title == m_loaded ? tr("Restart this lesson")
                                                         : tr("Start this lesson"));
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
