// The control panel: every setting of a run, grouped (model, residual scheme, optimisation, task,
// device, telemetry). Controls marked "live" are sent to the running engine at once; changing any
// other asks for a restart (the main window decides). Invalid combinations are explained in place.
#pragma once
#include <QStringList>
#include <QWidget>
#include <functional>
#include <utility>
#include <vector>

#include "engine/config/config.h"

class QLabel;
class QFormLayout;
class QVBoxLayout;
class QComboBox;

namespace normlab::ui {

class FieldNotices;

class ConfigPanel : public QWidget {
    Q_OBJECT
  public:
    explicit ConfigPanel(QWidget* parent = nullptr);

    // The config the controls describe (keys without a control keep the loaded config's values).
    // Throws InputError when a field does not parse.
    normlab::Config config() const;
    void setConfig(const normlab::Config& config);
    // Empty when the controls describe a valid config; else what to change.
    QString problem() const { return m_problem; }
    void setDeviceInUse(const QString& text);
    // Whether a key changes live; used to mark controls and route edits.
    static bool isLive(const QString& key);
    // A spin box's limits for an integer key: the key table's range (config_key_range), within int's.
    static std::pair<int, int> spinRange(const QString& key);

  signals:
    void liveChanged(const QString& key, const QString& value);
    void restartNeeded(const QString& key);
    void validityChanged(bool valid);

  private:
    // What is wrong with the text file the config names (empty: nothing, or no file chosen); cached.
    QString textFileProblem(const normlab::Config& config);
    QString m_textFileStamp, m_textFileProblem;
    struct Binding {
        QString key;
        QWidget* widget = nullptr;
        std::function<QString()> read;              // the control's value as for --set
        std::function<void(const QString&)> write;  // from the config's value
    };
    // One entry of a choice box: the config value, the text shown and its tooltip.
    struct Choice {
        QString value;
        QString text;
        QString tip;
    };
    // auto, cpu and cuda, labelled with what this machine has (the GPU's name, or why there is none).
    static std::vector<Choice> deviceChoices();
    // The constructor's parts, top to bottom: the live-dot legend and the problem line, then one group
    // of controls each.
    void addLegendAndProblem(QVBoxLayout* layout);
    void addModelGroup();
    void addNormGroup();
    void addOptimisationGroup();
    void addTaskGroup();
    void addDeviceGroup();
    QFormLayout* addGroup(const QString& title);
    void addRow(QFormLayout* form, const QString& label, const QString& key, QWidget* widget,
                const QString& tip);
    // A combo of the strings the engine accepts for `key` (config_key_choices).
    void bindCombo(QFormLayout* form, const QString& label, const QString& key, const QString& tip);
    void bindChoices(QFormLayout* form, const QString& label, const QString& key,
                     const std::vector<Choice>& choices, const QString& tip);
    // A spin box limited to the key's range in the engine's key table.
    void bindInt(QFormLayout* form, const QString& label, const QString& key, const QString& tip);
    void bindNumber(QFormLayout* form, const QString& label, const QString& key, const QString& tip);
    void bindCheck(QFormLayout* form, const QString& label, const QString& key, const QString& tip);
    void addWarmupRow(QFormLayout* form);
    void addTextFileRow(QFormLayout* form);
    // data.tokenizer: an editable list (bytes, bpe:N) and a button for a SentencePiece .model file.
    void addTokenizerRow(QFormLayout* form);
    // train.precision and train.loss_scale (an editable list: none, dynamic, dynamic:N, a factor).
    void addPrecisionRows(QFormLayout* form);
    // An editable combo box of suggestions bound to the string `key`; its binding's widget is `row` (the
    // row it sits in), or the box itself when row is null.
    QComboBox* editableChoices(const QString& key, QWidget* row, const QStringList& suggestions);
    void onEdited(const QString& key);
    void revalidate();
    void updateResidualConstants();

    std::vector<Binding> m_bindings;
    normlab::Config m_base;
    QString m_problem;
    bool m_loading = false;
    FieldNotices* m_notices = nullptr;  // the problem over the legend and under the fields it names
    QString m_lastEdited;               // the key the user changed last
    QLabel* m_residualConstants = nullptr;
    QLabel* m_deviceInUse = nullptr;
};

}  // namespace normlab::ui
