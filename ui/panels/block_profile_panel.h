// Per-block profiles against block index, now (or at a chosen step) and at the first step (faint):
// the base of the block-gradient and block-activation charts, with their choice of steps. Log value
// axes.
#pragma once
#include <QComboBox>
#include <QSpinBox>
#include <functional>
#include <optional>

#include "engine/core/step_range.h"
#include "ui/panels/line_panel.h"

namespace normlab::ui {

// Shared by both: a "Show" choice between the newest step with step 1 as a faint reference, step 1
// alone (initialisation, what Xiong et al.'s lemmas describe), and a chosen step with step 1 (the stall
// at step 100). A span of steps A:B (--steps, Dashboard::zoomSteps) shows step B with step A faint.
// Between the steps every run keeps (BlockProfiles), the nearest kept step before is shown, named.
class BlockProfilePanel : public LinePanel {
    Q_OBJECT
  public:
    enum class When { Now, InitialOnly, ChosenStep };
    BlockProfilePanel(const QString& id, const QString& title, const TelemetryStore& store, QWidget* parent);
    void setInitialOnly(bool initialOnly);
    // A chosen step (and the "chosen step" choice).
    void showStep(int64_t step);
    // The span's last step, with its first as the reference (none: back to the Show choice).
    void setStepSpan(std::optional<normlab::StepRange> steps);
    bool overSteps() const override { return false; }

  protected:
    // Adds the profile series of `run` for a per-block value.
    void addProfiles(PlotContent& content, const RunHistory& run,
                     const std::function<double(const BlockValues&)>& value) const;

  private:
    QComboBox* m_when = nullptr;
    QSpinBox* m_step = nullptr;  // the chosen step (shown with that choice)
    std::optional<normlab::StepRange> m_span;
};

}  // namespace normlab::ui
