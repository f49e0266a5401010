// Content of the two block-profile charts.
#include "ui/panels/block_profile_panels.h"

#include <QLabel>

#include "ui/panels/run_captions.h"

namespace normlab::ui {

BlockProfilePanel::BlockProfilePanel(const QString& id, const QString& title, const TelemetryStore& store,
                                     QWidget* parent)
    : LinePanel(id, title, store, parent) {
    m_when = new QComboBox;
    m_when->addItem(tr("now + step 1"), false);
    m_when->addItem(tr("step 1 only"), true);
    m_when->setToolTip(
        tr("Now (solid) with step 1 dashed, or step 1 alone: the model at initialisation, "
           "which Xiong et al.'s lemmas describe"));
    header()->addWidget(new QLabel(tr("Show")));
    header()->addWidget(m_when);
    connect(m_when, &QComboBox::currentIndexChanged, this, &BlockProfilePanel::refresh);
}

void BlockProfilePanel::setInitialOnly(bool initialOnly) {
    m_when->setCurrentIndex(initialOnly ? 1 : 0);
}

void BlockProfilePanel::addProfiles(
    PlotContent& content, const RunHistory& run,
    const std::function<double(const normlab::LayerTelemetry&)>& value) const {
    const auto profile = [&](const std::vector<normlab::LayerTelemetry>& layers) {
        QVector<QPointF> points;
        for (size_t b = 0; b < layers.size(); ++b) points.append({static_cast<double>(b), value(layers[b])});
        return points;
    };
    if (run.latestLayers.empty()) return;
    const bool initialOnly = m_when->currentData().toBool();
    PlotSeries initial = runSeries(store(), run, tr("step 1"), initialOnly, profile(run.initialLayers));
    if (!initialOnly) {
        initial.colour.setAlpha(90);
        initial.width = 1.5;
        initial.style = Qt::DashLine;
    } else {
        initial.width = 2.2;
        initial.pointsVisible = true;
    }
    content.series.push_back(initial);
    if (initialOnly) return;
    PlotSeries now =
        runSeries(store(), run, tr("step %1").arg(run.latestLayersStep), true, profile(run.latestLayers));
    now.width = 2.2;
    now.pointsVisible = true;
    content.series.push_back(now);
}

BlockGradientPanel::BlockGradientPanel(const TelemetryStore& store, QWidget* parent)
    : BlockProfilePanel(QStringLiteral("block_gradient"), tr("Gradient norm per block"), store, parent) {
    m_tensor = new QComboBox;
    for (GradientTensor tensor : {GradientTensor::Total, GradientTensor::Qkv, GradientTensor::AttnOut,
                                  GradientTensor::Ffn1, GradientTensor::Ffn2})
        m_tensor->addItem(gradientTensorName(tensor), static_cast<int>(tensor));
    m_tensor->setToolTip(tr("Which weight's gradient to show (w_2 is Xiong et al.'s Figure 3)"));
    header()->addWidget(new QLabel(tr("of")));
    header()->addWidget(m_tensor);
    header()->addStretch();
    connect(m_tensor, &QComboBox::currentIndexChanged, this, &BlockGradientPanel::refresh);
}

PlotContent BlockGradientPanel::buildContent(int) const {
    const auto tensor = static_cast<GradientTensor>(m_tensor->currentData().toInt());
    PlotContent content;
    content.x.title = tr("block");
    content.y.title = tensor == GradientTensor::Total ? tr("||grad W||_F")
                                                      : tr("||grad %1||_F").arg(gradientTensorName(tensor));
    if (tensor == GradientTensor::Total) content.y.note = tr("block");
    content.y.log = true;
    content.emptyText = tr("Appears after the first step");
    for (const auto& [id, run] : store().runs())
        if (run.visible)
            addProfiles(content, run,
                        [tensor](const normlab::LayerTelemetry& layer) { return gradientOf(layer, tensor); });
    return content;
}

BlockResidPanel::BlockResidPanel(const TelemetryStore& store, QWidget* parent)
    : BlockProfilePanel(QStringLiteral("block_resid"), tr("Activation norm per block (resid)"), store,
                        parent) {
    header()->addStretch();
}

PlotContent BlockResidPanel::buildContent(int) const {
    PlotContent content;
    content.x.title = tr("block");
    content.y.title = tr("E||h||^2 / d");
    content.y.log = true;
    content.emptyText = tr("Appears after the first step");
    bool preBand = false, postLevel = false;
    int blocks = 0;
    for (const auto& [id, run] : store().runs()) {
        if (!run.visible) continue;
        addProfiles(content, run, [](const normlab::LayerTelemetry& layer) { return layer.resid; });
        if (!run.config.model.theory_mode) continue;
        blocks = std::max(blocks, run.config.model.layers);
        preBand |= run.config.model.norm_placement == normlab::NormPlacement::Pre;
        postLevel |= run.config.model.norm_placement == normlab::NormPlacement::Post;
    }
    if (preBand) {
        // Lemma 2 (Pre-LN): (1 + l/2) <= E||x_l||^2/d <= (1 + 3l/2) for block l = b + 1.
        PlotBand band{tr("Lemma 2 bounds (Pre-LN)"), {}, {}, QColor(120, 120, 120)};
        for (int b = 0; b < blocks; ++b) {
            const double l = b + 1;
            band.lower.append({static_cast<double>(b), 1.0 + l / 2.0});
            band.upper.append({static_cast<double>(b), 1.0 + 3.0 * l / 2.0});
        }
        content.bands.push_back(band);
    }
    if (postLevel) {
        content.series.push_back({tr("Lemma 2 (Post-LN): 1.5"),
                                  QColor(90, 90, 90),
                                  {QPointF(0, 1.5), QPointF(std::max(blocks - 1, 1), 1.5)},
                                  1.2,
                                  Qt::DashDotLine});
    }
    return content;
}

}  // namespace normlab::ui
