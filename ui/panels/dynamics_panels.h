// Training dynamics over steps: the update/parameter ratio per block of one run (colour = depth),
// attention health for every visible run (mean entropy over blocks, largest logit on a second axis), and
// attention-logit growth per block of one run with the RMS of the queries and keys that drive it, and the
// output logits' drift (mean log Z and mean logit) of every visible run.
#pragma once
#include "ui/panels/line_panel.h"
#include "ui/panels/run_selector.h"

namespace normlab::ui {

class UpdateRatioPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit UpdateRatioPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;

  private:
    RunSelector* m_runs = nullptr;
};

class AttentionLogitPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit AttentionLogitPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;

  private:
    RunSelector* m_runs = nullptr;
};

class OutputLogitPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit OutputLogitPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;
};

class AttentionPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit AttentionPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;
};

}  // namespace normlab::ui
