// The block-profile charts' choice of steps and the profile series of a run at them.
#include "ui/panels/block_profile_panel.h"

#include <QLabel>
#include <algorithm>
#include <limits>

#include "ui/panels/run_captions.h"

namespace normlab::ui {

BlockProfilePanel::BlockProfilePanel(const QString& id, const QString& title, const TelemetryStore& store,
                                     QWidget* parent)
    : LinePanel(id, title, store, parent) {
    m_when = new QComboBox;
    m_when->addItem(tr("now + step 1"), static_cast<int>(When::Now));
    m_when->addItem(tr("step 1 only"), static_cast<int>(When::InitialOnly));
    m_when->addItem(tr("step... + step 1"), static_cast<int>(When::ChosenStep));
    m_when->setToolTip(
        tr("Now (solid) with step 1 dashed; step 1 alone: the model at initialisation, which Xiong et "
           "al.'s lemmas describe; or a step you choose (the nearest step kept before it) with step 1"));
    m_step = new QSpinBox;
    m_step->setObjectName(id + QStringLiteral("_step"));
    m_step->setRange(1, std::numeric_limits<int>::max());
    m_step->setValue(100);
    m_step->setToolTip(tr("The step whose profile is drawn solid"));
    m_step->setVisible(false);
    header()->addWidget(new QLabel(tr("Show")));
    header()->addWidget(m_when);
    header()->addWidget(m_step);
    connect(m_when, &QComboBox::currentIndexChanged, this, [this] {
        m_step->setVisible(static_cast<When>(m_when->currentData().toInt()) == When::ChosenStep);
        refresh();
    });
    connect(m_step, &QSpinBox::valueChanged, this, &BlockProfilePanel::refresh);
}

void BlockProfilePanel::setInitialOnly(bool initialOnly) {
    m_when->setCurrentIndex(m_when->findData(static_cast<int>(initialOnly ? When::InitialOnly : When::Now)));
}

void BlockProfilePanel::showStep(int64_t step) {
    m_step->setValue(static_cast<int>(std::clamp<int64_t>(step, 1, std::numeric_limits<int>::max())));
    m_when->setCurrentIndex(m_when->findData(static_cast<int>(When::ChosenStep)));
}

void BlockProfilePanel::setStepSpan(std::optional<normlab::StepRange> steps) {
    m_span = steps;
    refresh();
}

void BlockProfilePanel::addProfiles(PlotContent& content, const RunHistory& run,
                                    const std::function<double(const BlockValues&)>& value) const {
    if (run.profiles.empty()) return;
    const auto points = [&](const BlockProfile& profile) {
        QVector<QPointF> out;
        for (size_t b = 0; b < profile.blocks.size(); ++b)
            out.append({static_cast<double>(b), value(profile.blocks[b])});
        return out;
    };
    const auto when = static_cast<When>(m_when->currentData().toInt());
    const BlockProfile* reference = &run.profiles.first();
    const BlockProfile* shown = &run.profiles.latest();
    if (m_span) {
        shown = &run.profiles.atOrBefore(m_span->last);
        if (m_span->first > reference->step) reference = &run.profiles.atOrBefore(m_span->first);
    } else if (when == When::ChosenStep) {
        shown = &run.profiles.atOrBefore(m_step->value());
    } else if (when == When::InitialOnly) {
        shown = nullptr;
    }
    PlotSeries faint =
        runSeries(store(), run, tr("step %1").arg(reference->step), shown == nullptr, points(*reference));
    if (shown) {
        // A legend of runs leaves the dashed lines unnamed: the key names their step.
        if (!faint.inLegend) content.styleKey = tr("dashed: step %1").arg(reference->step);
        faint.colour.setAlpha(90);
        faint.width = 1.5;
        faint.style = Qt::DashLine;
    } else {
        faint.width = 2.2;
        faint.pointsVisible = true;
    }
    content.series.push_back(faint);
    if (!shown) return;
    const QString step = tr("step %1").arg(shown->step);
    PlotSeries solid = runSeries(store(), run, step, true, points(*shown));
    // With several runs the legend names the run: say which step it shows too (a slide at step 100).
    if (solid.name == run.name) solid.name = QStringLiteral("%1 (%2)").arg(run.name, step);
    solid.width = 2.2;
    solid.pointsVisible = true;
    content.series.push_back(solid);
}

}  // namespace normlab::ui
