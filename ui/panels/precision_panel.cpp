// Content of the precision chart: the selected run's per-block shares or headroom, or its loss scale,
// with the runs' events (a dynamic scale's skipped steps among them) as markers.
#include "ui/panels/precision_panel.h"

#include "ui/panels/event_markers.h"
#include "ui/panels/run_captions.h"

namespace normlab::ui {

PrecisionPanel::PrecisionPanel(const TelemetryStore& store, QWidget* parent)
    : LinePanel(QStringLiteral("precision"), tr("Precision per block"), store, parent) {
    m_runs = addRunSelector();
    m_runs->setPreference([](const RunHistory& run) {  // a run that records it, before one in plain fp32
        return run.config.train.precision != NumberFormat::Fp32 || run.config.train.loss_scale != "none";
    });
    m_quantity = addHeaderMenu(
        tr("Show"), QStringLiteral("precision_quantity"),
        tr("Under train.precision bf16, fp16 or fp8: the share of each block's matmul gradients (solid) "
           "and activations (dashed) that rounded to zero or a subnormal, or overflowed; the headroom "
           "log2(format max / largest |x|) of its residual stream; or the loss scale (train.loss_scale)"));
    m_quantity->addItems(
        {tr("underflow share"), tr("overflow share"), tr("stream headroom"), tr("loss scale")});
    connect(m_quantity, &QComboBox::currentIndexChanged, this, &PrecisionPanel::refresh);
}

void PrecisionPanel::addPair(PlotContent& content, const RunHistory& run, PrecisionQuantity gradients,
                             PrecisionQuantity activations, int columns) const {
    addBlockSeries(content, run.precision.perBlock(gradients), columns, tr(" gradients"));
    addBlockSeries(content, run.precision.perBlock(activations), columns, tr(" activations"), Qt::DashLine);
}

PlotContent PrecisionPanel::buildContent(int columns) const {
    PlotContent content;
    content.x = stepAxis();
    const RunHistory* run = m_runs->selectedRun();
    content.emptyText = emptyText(tr("Appears after the first logged step of a run in bf16, fp16 or fp8 "
                                     "(train.precision) or with a loss scale"),
                                  run);
    content.markers = eventMarkers(store());
    const auto show = static_cast<Show>(m_quantity->currentIndex());
    if (show == kLossScale) {
        content.y = AxisSpec{tr("loss scale"), true, std::nullopt, std::nullopt, QString()};
        if (run && !run->precision.lossScale().empty())
            content.series.push_back(runSeries(store(), *run, tr("loss scale"), true,
                                               pointsOf(run->precision.lossScale(), columns)));
        return content;
    }
    if (show == kHeadroom) {
        content.y = AxisSpec{tr("headroom (doublings to the format's max)"), false, std::nullopt,
                             std::nullopt, QString()};
        if (run) addBlockSeries(content, run->precision.perBlock(PrecisionQuantity::StreamHeadroom), columns);
        return content;
    }
    content.y = AxisSpec{show == kUnderflow ? tr("share underflowed") : tr("share overflowed"), false, 0.0,
                         std::nullopt, tr("solid: gradients, dashed: activations")};
    if (!run) return content;
    if (show == kUnderflow)
        addPair(content, *run, PrecisionQuantity::GradUnderflow, PrecisionQuantity::ActUnderflow, columns);
    else
        addPair(content, *run, PrecisionQuantity::GradOverflow, PrecisionQuantity::ActOverflow, columns);
    return content;
}

}  // namespace normlab::ui
