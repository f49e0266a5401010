// Per-block profiles against block index, now and at the first step (faint): the gradient norm of a
// chosen weight matrix (Xiong et al.'s Figure 3) and the residual activation norm `resid` (with
// Lemma 2's band for Pre-LN and its 1.5 level for Post-LN in theory mode). Log value axes.
#pragma once
#include <QComboBox>
#include <functional>

#include "ui/panels/line_panel.h"

namespace normlab::ui {

// Shared by both: a "Show" choice between the newest step with step 1 as a faint reference, and
// step 1 alone (initialisation, what Xiong et al.'s lemmas describe).
class BlockProfilePanel : public LinePanel {
    Q_OBJECT
  public:
    BlockProfilePanel(const QString& id, const QString& title, const TelemetryStore& store, QWidget* parent);
    void setInitialOnly(bool initialOnly);
    bool overSteps() const override { return false; }

  protected:
    // Adds the profile series of `run` for a per-block value.
    void addProfiles(PlotContent& content, const RunHistory& run,
                     const std::function<double(const normlab::LayerTelemetry&)>& value) const;

  private:
    QComboBox* m_when = nullptr;
};

class BlockGradientPanel : public BlockProfilePanel {
    Q_OBJECT
  public:
    explicit BlockGradientPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;

  private:
    QComboBox* m_tensor = nullptr;
};

class BlockResidPanel : public BlockProfilePanel {
    Q_OBJECT
  public:
    explicit BlockResidPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;
};

}  // namespace normlab::ui
