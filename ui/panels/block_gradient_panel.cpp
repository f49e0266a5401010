// The block-gradient chart's series for the matrix chosen.
#include "ui/panels/block_gradient_panel.h"

#include <QLabel>
#include <algorithm>
#include <limits>

#include "ui/panels/run_captions.h"

namespace normlab::ui {

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
                        [tensor](const BlockValues& block) { return gradientOf(block, tensor); });
    return content;
}

}  // namespace normlab::ui
