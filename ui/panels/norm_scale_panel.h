// How much each norm actually normalises, for one run: the mean per-token scale 1/std of every block's
// norms over steps, one family of norms at a time (sub-layer inputs with the final norm, Peri-LN
// outputs, cross-attention, encoder), chosen in the header among the families the run has.
#pragma once
#include <QComboBox>

#include "ui/history/norm_scale_history.h"
#include "ui/panels/line_panel.h"
#include "ui/panels/run_selector.h"

namespace normlab::ui {

class NormScalePanel : public LinePanel {
    Q_OBJECT
  public:
    explicit NormScalePanel(const TelemetryStore& store, QWidget* parent = nullptr);
    void refresh() override;
    PlotContent buildContent(int columns) const override;
    // BatchNorm's gap is no scale: a figure of it says what it shows
    QString chartTitle() const override;
    // Shows `family` whenever the selected run has it; otherwise the first family the run has.
    void setFamily(NormFamily family);

  private:
    NormFamily shownFamily(const RunHistory& run) const;
    void syncFamilyChoices();  // one entry per family the selected run has, the shown one current

    RunSelector* m_runs = nullptr;
    QComboBox* m_family = nullptr;
    NormFamily m_wantedFamily = NormFamily::Inputs;
};

}  // namespace normlab::ui
