// The difference chart: run B minus run A, step by step, for the loss, the validation loss, the
// gradient norm or a per-block quantity at a chosen block, with the zero line; for forks and seeds on
// identical batches, the effect of a change with the noise of the batches taken out. For the losses it
// also states the final values' comparison (each entry's mean and 95% CI, B - A paired by seed).
#pragma once
#include "ui/panels/line_panel.h"
#include "ui/panels/run_selector.h"

class QSpinBox;

namespace normlab::ui {

class DifferencePanel : public LinePanel {
    Q_OBJECT
  public:
    explicit DifferencePanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;
    // "Difference B - A: <quantity> (<B> - <A>)".
    QString shownTitle() const override;
    // Shows run `b` minus run `a` (a fork minus its parent, when the fork is made).
    void showPair(int a, int b);

    // The final value compared under the chart, as `normlab-cli compare` does (loss charts only).
    enum class Final { None, Loss, ValidationLoss };
    // The quantities it can show: label, whether it is per block, and the series of a run (at a block).
    struct Quantity {
        QString label;
        bool perBlock = false;
        const DecimatedSeries* (*series)(const RunHistory& run, int block) = nullptr;
        Final compared = Final::None;
    };
    static const std::vector<Quantity>& quantities();

  private:
    const Quantity& quantity() const;
    QString quantityLabel() const;

    RunSelector* m_first = nullptr;   // A
    RunSelector* m_second = nullptr;  // B
    QComboBox* m_quantity = nullptr;
    QSpinBox* m_block = nullptr;
};

}  // namespace normlab::ui
