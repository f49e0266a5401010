// Each attention head's largest logit over steps, for one block of one run (chosen in the header, else
// the block whose logit is largest now): which heads' logits grow (per block: "attention_logits").
#pragma once
#include <QComboBox>

#include "ui/panels/line_panel.h"
#include "ui/panels/run_selector.h"

namespace normlab::ui {

class AttentionHeadPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit AttentionHeadPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    void refresh() override;
    PlotContent buildContent(int columns) const override;
    // Shows block `block` (clamped to the selected run's blocks when it draws); -1 (the default) follows
    // the block whose largest logit is greatest at the newest step.
    void setBlock(int block);

  private:
    // The block shown for `run`: the chosen one, clamped, or the one whose logit is largest now.
    int shownBlock(const RunHistory& run) const;
    // One entry per block of the selected run, the shown one current.
    void syncBlockChoices();

    RunSelector* m_runs = nullptr;
    QComboBox* m_block = nullptr;
    int m_wantedBlock = -1;
};

}  // namespace normlab::ui
