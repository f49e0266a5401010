// ConfigPanel: controls bound to config keys through "--set" strings, so the panel, the CLI and
// experiment files share one parser (apply_override) and one validator (validate).
#include "ui/controls/config_panel.h"

#include "engine/data/task.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDoubleValidator>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/backend/devices.h"
#include "engine/config/key_range.h"
#include "engine/core/errors.h"
#include "engine/model/constants.h"
#include "engine/model/layout.h"
#include "engine/train/live_changes.h"
#include "ui/controls/field_notices.h"

namespace normlab::ui {

namespace {
const char* kLiveTag = " <span style='color:#1a8f4f'>&#9679;</span>";

// The config's value of `key` as text for a control ("post", "0.003", "true").
QString valueText(const nlohmann::json& json, const QString& key) {
    const nlohmann::json* node = &json;
    for (const QString& part : key.split(QLatin1Char('.'))) node = &node->at(part.toStdString());
    if (node->is_string()) return QString::fromStdString(node->get<std::string>());
    return QString::fromStdString(node->dump());
}
}  // namespace

std::vector<ConfigPanel::Choice> ConfigPanel::deviceChoices() {
    std::vector<Choice> choices;
    QString best;
    for (const normlab::DeviceInfo& device : normlab::list_devices()) {
        const QString id = QString::fromStdString(device.id);
        const QString label = QString::fromStdString(device.label);
        if (device.available) {
            best = label;  // the list is in order of preference: the last available one wins
            choices.push_back({id, QStringLiteral("%1: %2").arg(id, label), label});
        } else {
            const QString why = QString::fromStdString(device.reason);
            choices.push_back({id, tr("%1: unavailable").arg(id), why});
        }
    }
    choices.insert(choices.begin(), {QStringLiteral("auto"), tr("auto: %1").arg(best),
                                     tr("The best device that answers: %1").arg(best)});
    return choices;
}

std::pair<int, int> ConfigPanel::spinRange(const QString& key) {
    const std::optional<normlab::KeyRange> range = normlab::config_key_range(key.toStdString());
    constexpr double kLowest = std::numeric_limits<int>::min();
    constexpr double kHighest = std::numeric_limits<int>::max();
    if (!range) return {static_cast<int>(kLowest), static_cast<int>(kHighest)};
    return {static_cast<int>(std::clamp(range->lo, kLowest, kHighest)),
            static_cast<int>(std::clamp(range->hi, kLowest, kHighest))};
}

bool ConfigPanel::isLive(const QString& key) {
    return normlab::is_live_key(key.toStdString());
}

ConfigPanel::ConfigPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    addLegendAndProblem(layout);
    addModelGroup();
    addNormGroup();
    addOptimisationGroup();
    addTaskGroup();
    addDeviceGroup();
    layout->addStretch();
    setConfig(normlab::Config{});
}

void ConfigPanel::addLegendAndProblem(QVBoxLayout* layout) {
    auto* legend =
        new QLabel(tr("Settings marked %1 apply live at the next step; the others restart the run.")
                       .arg(QString::fromLatin1(kLiveTag).trimmed()));
    legend->setWordWrap(true);
    layout->addWidget(legend);
    // Problems show over the legend at the top and under the fields they name, over the form (it never
    // moves under the pointer as they come and go).
    m_notices = new FieldNotices(this, legend, QStringLiteral("configProblem"));
}

void ConfigPanel::addModelGroup() {
    QFormLayout* model = addGroup(tr("Model"));
    bindInt(model, tr("Blocks"), "model.layers", tr("Number of Transformer blocks (depth)"));
    bindInt(model, tr("Encoder blocks"), "model.encoder_layers",
            tr("0: decoder-only. Otherwise an encoder of this many blocks reads each row's source part and "
               "every decoder block gets cross-attention to it (Xiong et al.'s 6 + 6 setting of Figure 3); "
               "fixed for a run"));
    bindInt(model, tr("d_model"), "model.d_model", tr("Width of the residual stream"));
    bindInt(model, tr("Heads"), "model.heads", tr("Attention heads; must divide d_model"));
    bindInt(model, tr("d_ff"), "model.d_ff", tr("Hidden width of the feed-forward layer"));
    bindInt(model, tr("Sequence length"), "model.seq_len", tr("Tokens per training sequence"));
    bindCombo(model, tr("FFN"), "model.ffn",
              tr("mlp: two matrices and the activation below; swiglu / geglu: gated (gate, up and down "
                 "matrices), d_ff the gated width (2/3 of an MLP's for the same parameters)"));
    bindCombo(model, tr("Activation"), "model.activation", tr("Feed-forward activation (mlp only)"));
    bindCombo(model, tr("Positions"), "model.position",
              tr("learned: a position embedding; rope: rotary on q and k (after any QK-norm); none"));
    bindNumber(model, tr("RoPE theta"), "model.rope_theta", tr("Rotary base (rope only)"));
    bindInt(model, tr("KV heads"), "model.kv_heads",
            tr("Grouped-query attention: key/value heads, dividing Heads (1: multi-query; 0: as many as "
               "heads)"));
    bindCheck(model, tr("Biases"), "model.bias", tr("Linear layers with biases (Llama has none)"));
    bindCheck(model, tr("Tied embeddings"), "model.tie_embeddings",
              tr("The output head is the token embedding (one matrix, both gradients)"));
    bindCombo(model, tr("Init"), "model.init", tr("Weight initialisation"));
    bindCombo(model, tr("Parametrization"), "model.parametrization",
              tr("sp: standard. mup: init, learning rates, attention scale and output multiplier change with "
                 "d_model relative to Base width, so a learning rate tuned there transfers. completep: muP "
                 "plus each residual branch scaled by Base depth / Blocks"));
    bindInt(model, tr("Base width"), "model.base_width",
            tr("muP's base: the d_model where mup equals sp (0: d_model itself)"));
    bindInt(model, tr("Base depth"), "model.base_depth",
            tr("CompleteP's base: the blocks where completep equals mup (0: Blocks itself)"));
    bindCheck(model, tr("Theory mode"), "model.theory_mode",
              tr("Xiong et al.'s simplified model (Lemma 2 bands appear on the activation chart)"));
}

void ConfigPanel::addNormGroup() {
    QFormLayout* norms = addGroup(tr("Normalisation and residuals"));
    bindCombo(norms, tr("Norm placement"), "model.norm_placement",
              tr("Post-LN: norm after the residual sum; Pre-LN: before each sub-layer; Peri-LN: around it; "
                 "mix: Mix-LN, Post-LN first blocks then Pre-LN"));
    bindCombo(norms, tr("Norm type"), "model.norm_type",
              tr("LayerNorm, RMSNorm or DyT (tanh) normalise each token; BatchNorm and PowerNorm each "
                 "feature over the batch (running statistics for validation)"));
    bindCombo(norms, tr("QK-norm"), "model.qk_norm",
              tr("Normalise each head's queries and keys before the dot product (learnable gain per head "
                 "dimension): bounds attention logits at high learning rates"));
    bindNumber(norms, tr("Mix-LN Post fraction"), "model.mix_post_fraction",
               tr("Mix-LN (norm placement mix): the first floor(fraction x blocks) blocks Post-LN, the rest "
                  "Pre-LN; the paper's default 0.25"));
    bindInt(norms, tr("Gain warmup"), "model.norm_gain_warmup_steps",
            tr("Steps over which every norm's gain ramps from the start factor to 1; 0: off"));
    bindNumber(norms, tr("Gain warmup start"), "model.norm_gain_warmup_start",
               tr("Norm-gain warmup's factor at step 1, in (0, 1]"));
    bindInt(norms, tr("Residual warmup"), "model.residual_warmup_steps",
            tr("ProRes: block l's branch ramps from 0 to 1 over T x l steps; 0: off"));
    bindNumber(norms, tr("DyT alpha"), "model.dyt_alpha",
               tr("DyT's initial alpha in tanh(alpha x) (norm type dyt); the DyT paper uses 1.0 for LLMs"));
    bindNumber(norms, tr("BatchNorm momentum"), "model.bn_momentum",
               tr("BatchNorm / PowerNorm: each training step moves the running statistics this fraction of "
                  "the way to the batch's, in (0, 1]; PyTorch's default 0.1"));
    bindCombo(norms, tr("Residual scheme"), "model.residual",
              tr("DeepNorm and Admin rescale the shortcut of Post-LN; ReZero gates each branch; LayerNorm "
                 "Scaling (lns) divides block l's input norms' outputs by sqrt(l); B2T (b2t) adds each "
                 "Post-LN block's input before its last norm; ResiDual (resi_dual) adds a normalised "
                 "running sum of every branch to Post-LN's output; DenseFormer (denseformer) feeds each "
                 "block a learned average of the earlier blocks' outputs"));
    bindInt(norms, tr("DenseFormer dilation"), "model.denseformer_dilation",
            tr("DenseFormer: block i's average reads outputs i, i - k, i - 2k, ... (1: all of them)"));
    bindCombo(norms, tr("Admin init"), "model.admin_init",
              tr("Admin's omega from the closed form or profiled on a batch at init"));
    m_residualConstants = new QLabel;
    m_residualConstants->setObjectName(QStringLiteral("residualConstants"));
    m_residualConstants->setWordWrap(true);
    norms->addRow(QString(), m_residualConstants);
}

void ConfigPanel::addOptimisationGroup() {
    QFormLayout* optimisation = addGroup(tr("Optimisation"));
    bindCombo(optimisation, tr("Optimizer"), "train.optimizer", tr("Update rule"));
    bindNumber(optimisation, tr("Learning rate"), "train.lr", tr("Peak learning rate (e.g. 3e-3)"));
    addWarmupRow(optimisation);
    bindCombo(optimisation, tr("Schedule"), "train.schedule", tr("Learning-rate schedule after warmup"));
    bindNumber(optimisation, tr("Clip grad norm"), "train.clip_grad_norm",
               tr("Global gradient-norm clipping; 0: off"));
    bindNumber(optimisation, tr("Weight decay"), "train.weight_decay",
               tr("Decoupled for AdamW, L2 otherwise"));
    bindCombo(optimisation, tr("Decay mode"), "train.weight_decay_mode",
              tr("AdamW: decay by lr x weight decay (lr_coupled, PyTorch's AdamW) or by weight decay x "
                 "lr / peak lr (independent: Wortsman et al., who use 1e-4)"));
    bindNumber(optimisation, tr("z-loss"), "train.z_loss",
               tr("Adds z-loss x (log Z)^2 per token, keeping the output logits' log Z near 0 (PaLM: 1e-4); "
                  "0: off"));
    addPrecisionRows(optimisation);
    bindInt(optimisation, tr("Batch size"), "train.batch_size", tr("Sequences per step"));
    bindInt(optimisation, tr("Steps"), "train.steps", tr("Optimizer steps of the run"));
    bindInt(optimisation, tr("Seed"), "train.seed", tr("Seed of initialisation and data order"));
}

void ConfigPanel::addTaskGroup() {
    QFormLayout* task = addGroup(tr("Task"));
    bindCombo(task, tr("Task"), "data.task",
              tr("text: a language model over a text (bytes, or the tokenizer below); the others are "
                 "synthetic sequence tasks"));
    addTextFileRow(task);
    addTokenizerRow(task);
}

void ConfigPanel::addDeviceGroup() {
    QFormLayout* device = addGroup(tr("Device and telemetry"));
    bindChoices(device, tr("Device"), "device", deviceChoices(),
                tr("auto: CUDA when compiled in and a GPU answers, else the CPU. Changing it moves a "
                   "running run to the new device, which goes on from where it is"));
    m_deviceInUse = new QLabel(tr("in use: (not started)"));
    m_deviceInUse->setObjectName(QStringLiteral("deviceInUse"));
    m_deviceInUse->setWordWrap(true);
    device->addRow(QString(), m_deviceInUse);
    bindInt(device, tr("CPU threads"), "threads", tr("0: every core"));
    bindInt(device, tr("Telemetry every"), "telemetry.every", tr("Per-block telemetry every N steps"));
    bindInt(device, tr("Validation every"), "telemetry.val_every",
            tr("Validation loss every N steps; 0: never"));
    bindInt(device, tr("Checkpoint every"), "train.checkpoint_every",
            tr("Every N steps the run folder's model.safetensors is replaced by the run's state, so a crash "
               "or a loss spike can be resumed from just before it (normlab-cli train --resume); 0: never"));
    bindInt(device, tr("Checkpoints kept"), "train.checkpoint_keep",
            tr("How many of those checkpoints the run folder keeps, as model-step-N.safetensors, to fork or "
               "resume from (normlab-cli train --fork DIR --at N); 1: the newest only; 0: all"));
}

QFormLayout* ConfigPanel::addGroup(const QString& title) {
    auto* group = new QGroupBox(title);
    auto* form = new QFormLayout(group);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // A row too wide for the dock puts its field under its label: the panel then fits a narrow dock
    // instead of scrolling sideways (where Tab moved the labels out of view).
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    static_cast<QVBoxLayout*>(layout())->addWidget(group);
    return form;
}

void ConfigPanel::addRow(QFormLayout* form, const QString& label, const QString& key, QWidget* widget,
                         const QString& tip) {
    auto* name = new QLabel(label + (isLive(key) ? QString::fromLatin1(kLiveTag) : QString()));
    name->setTextFormat(Qt::RichText);
    const QString fullTip =
        tip +
        QStringLiteral("\n[%1]%2").arg(key, isLive(key) ? tr(" live: applies at the next step") : QString());
    name->setToolTip(fullTip);
    widget->setToolTip(fullTip);
    widget->setObjectName(key);
    form->addRow(name, widget);
    // What is wrong, right under the field it is about (the message at the top may be scrolled away).
    m_notices->addField(key, widget);
}

void ConfigPanel::bindCombo(QFormLayout* form, const QString& label, const QString& key, const QString& tip) {
    std::vector<Choice> items;
    for (const std::string& name : normlab::config_key_choices(key.toStdString())) {
        const QString choice = QString::fromStdString(name);
        items.push_back({choice, choice, QString()});
    }
    bindChoices(form, label, key, items, tip);
}

void ConfigPanel::bindChoices(QFormLayout* form, const QString& label, const QString& key,
                              const std::vector<Choice>& choices, const QString& tip) {
    auto* combo = new QComboBox;
    for (const Choice& choice : choices) {
        combo->addItem(choice.text, choice.value);
        if (!choice.tip.isEmpty()) combo->setItemData(combo->count() - 1, choice.tip, Qt::ToolTipRole);
    }
    addRow(form, label, key, combo, tip);
    m_bindings.push_back(
        {key, combo, [combo] { return combo->currentData().toString(); },
         [combo](const QString& value) { combo->setCurrentIndex(std::max(0, combo->findData(value))); }});
    connect(combo, &QComboBox::currentIndexChanged, this, [this, key] { onEdited(key); });
}

void ConfigPanel::bindInt(QFormLayout* form, const QString& label, const QString& key, const QString& tip) {
    auto* spin = new QSpinBox;
    const auto [min, max] = spinRange(key);
    spin->setRange(min, max);
    spin->setKeyboardTracking(false);
    addRow(form, label, key, spin, tip);
    m_bindings.push_back({key, spin, [spin] { return QString::number(spin->value()); },
                          [spin](const QString& value) { spin->setValue(value.toInt()); }});
    connect(spin, &QSpinBox::valueChanged, this, [this, key] { onEdited(key); });
}

void ConfigPanel::bindNumber(QFormLayout* form, const QString& label, const QString& key,
                             const QString& tip) {
    auto* edit = new QLineEdit;
    auto* validator = new QDoubleValidator(0.0, 1e12, 12, edit);  // the key table checks the range
    validator->setNotation(QDoubleValidator::ScientificNotation);
    validator->setLocale(QLocale::c());
    edit->setValidator(validator);
    addRow(form, label, key, edit, tip);
    m_bindings.push_back({key, edit, [edit] { return edit->text().trimmed(); },
                          [edit](const QString& value) { edit->setText(value); }});
    connect(edit, &QLineEdit::editingFinished, this, [this, key, edit] {
        if (edit->isModified()) onEdited(key);
        edit->setModified(false);
    });
}

void ConfigPanel::bindCheck(QFormLayout* form, const QString& label, const QString& key, const QString& tip) {
    auto* check = new QCheckBox;
    addRow(form, label, key, check, tip);
    m_bindings.push_back(
        {key, check,
         [check] { return check->isChecked() ? QStringLiteral("true") : QStringLiteral("false"); },
         [check](const QString& value) { check->setChecked(value == QLatin1String("true")); }});
    connect(check, &QCheckBox::toggled, this, [this, key] { onEdited(key); });
}

void ConfigPanel::addWarmupRow(QFormLayout* form) {
    // Warmup on/off plus its length: one key (0 steps is off); the length is kept while off.
    auto* row = new QWidget;
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* enabled = new QCheckBox(tr("on"));
    enabled->setObjectName(QStringLiteral("warmupEnabled"));
    const QString key = QStringLiteral("train.warmup_steps");
    auto* steps = new QSpinBox;
    steps->setRange(std::max(1, spinRange(key).first), spinRange(key).second);  // 0 steps is off
    steps->setValue(150);
    steps->setSuffix(tr(" steps"));
    steps->setKeyboardTracking(false);
    steps->setObjectName(QStringLiteral("warmupSteps"));
    layout->addWidget(enabled);
    layout->addWidget(steps, 1);
    addRow(form, tr("Warmup"), key, row, tr("Linear learning-rate warmup from 0 over N steps"));
    m_bindings.push_back({key, row,
                          [enabled, steps] {
                              return enabled->isChecked() ? QString::number(steps->value())
                                                          : QStringLiteral("0");
                          },
                          [enabled, steps](const QString& value) {
                              enabled->setChecked(value.toInt() > 0);
                              if (value.toInt() > 0) steps->setValue(value.toInt());
                          }});
    connect(enabled, &QCheckBox::toggled, this, [this, key, steps](bool on) {
        steps->setEnabled(on);
        onEdited(key);
    });
    connect(steps, &QSpinBox::valueChanged, this, [this, key, enabled] {
        if (enabled->isChecked()) onEdited(key);
    });
}

void ConfigPanel::addTextFileRow(QFormLayout* form) {
    auto* row = new QWidget;
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* path = new QLineEdit;
    path->setPlaceholderText(tr("shipped corpus"));
    auto* browse = new QPushButton(tr("Browse..."));
    layout->addWidget(path, 1);
    layout->addWidget(browse);
    const QString key = QStringLiteral("data.text_path");
    addRow(form, tr("Text file"), key, row, tr("UTF-8 text for the text task; empty: the shipped corpus"));
    m_bindings.push_back({key, row, [path] { return path->text().trimmed(); },
                          [path](const QString& value) { path->setText(value); }});
    connect(path, &QLineEdit::editingFinished, this, [this, key, path] {
        if (path->isModified()) onEdited(key);
        path->setModified(false);
    });
    connect(browse, &QPushButton::clicked, this, [this, key, path] {
        const QString chosen =
            QFileDialog::getOpenFileName(this, tr("Text file for the text task"), path->text(),
                                         tr("Text files (*.txt *.md);;All files (*)"));
        if (chosen.isEmpty()) return;
        path->setText(chosen);
        onEdited(key);
    });
}

void ConfigPanel::addTokenizerRow(QFormLayout* form) {
    auto* row = new QWidget;
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    const QString key = QStringLiteral("data.tokenizer");
    QComboBox* tokenizer = editableChoices(key, row,
                                           {QStringLiteral("bytes"), QStringLiteral("bpe:512"),
                                            QStringLiteral("bpe:1024"), QStringLiteral("bpe:2048")});
    tokenizer->setObjectName(QStringLiteral("tokenizer"));
    auto* browse = new QPushButton(tr("Model file..."));
    layout->addWidget(tokenizer, 1);
    layout->addWidget(browse);
    addRow(form, tr("Tokenizer"), key, row,
           tr("bytes: a token per byte (256); bpe:N: a BPE vocabulary of N pieces trained on the text and "
              "cached; or a SentencePiece .model file (Llama 2's tokenizer.model, a run's)"));
    connect(browse, &QPushButton::clicked, this, [this, key, tokenizer] {
        const QString chosen =
            QFileDialog::getOpenFileName(this, tr("SentencePiece model for the text task"), QString(),
                                         tr("SentencePiece models (*.model);;All files (*)"));
        if (chosen.isEmpty()) return;
        tokenizer->setCurrentText(chosen);
        onEdited(key);
    });
}

QComboBox* ConfigPanel::editableChoices(const QString& key, QWidget* row, const QStringList& suggestions) {
    auto* combo = new QComboBox;
    combo->setEditable(true);
    combo->addItems(suggestions);
    m_bindings.push_back({key, row ? row : combo, [combo] { return combo->currentText().trimmed(); },
                          [combo](const QString& value) { combo->setCurrentText(value); }});
    // A choice from the list applies at once, typed text when editing ends; a config loaded into the row
    // (setCurrentText) is neither, so it asks for no restart.
    connect(combo, &QComboBox::activated, this, [this, key] { onEdited(key); });
    QLineEdit* typed = combo->lineEdit();
    connect(typed, &QLineEdit::editingFinished, this, [this, key, typed] {
        if (typed->isModified()) onEdited(key);
        typed->setModified(false);
    });
    return combo;
}

void ConfigPanel::addPrecisionRows(QFormLayout* form) {
    bindCombo(form, tr("Precision"), "train.precision",
              tr("Emulated mixed precision: every matmul's inputs, weights and outputs (and in backward its "
                 "output gradient and weight gradient) rounded to the format, fp32 master weights; the "
                 "blocks' overflow and underflow shares and headroom show on the precision chart"));
    const QString key = QStringLiteral("train.loss_scale");
    QComboBox* scale = editableChoices(
        key, nullptr,
        {QStringLiteral("none"), QStringLiteral("dynamic"), QStringLiteral("1024"), QStringLiteral("65536")});
    addRow(form, tr("Loss scale"), key, scale,
           tr("none; dynamic (PyTorch's GradScaler: from 65536, a step whose gradients overflow is skipped "
              "and the scale halved, 2000 good steps double it); dynamic:N from N; or a fixed factor"));
}

normlab::Config ConfigPanel::config() const {
    normlab::Config config = m_base;
    for (const Binding& binding : m_bindings) {
        QString value = binding.read();
        // Strings go in as JSON strings so that "1e-3"-like text paths stay strings.
        if (binding.key == QLatin1String("data.text_path") || binding.key == QLatin1String("data.tokenizer"))
            value = QString::fromStdString(nlohmann::json(value.toStdString()).dump());
        normlab::apply_override(config, (binding.key + QLatin1Char('=') + value).toStdString());
    }
    return config;
}

void ConfigPanel::setConfig(const normlab::Config& config) {
    m_base = config;
    const nlohmann::json json = normlab::config_to_json(config);
    m_loading = true;
    for (const Binding& binding : m_bindings) binding.write(valueText(json, binding.key));
    m_loading = false;
    revalidate();
}

void ConfigPanel::setDeviceInUse(const QString& text) {
    m_deviceInUse->setText(text);
}

void ConfigPanel::onEdited(const QString& key) {
    if (m_loading) return;
    m_lastEdited = key;
    revalidate();
    if (!m_problem.isEmpty()) return;
    if (isLive(key)) {
        for (const Binding& binding : m_bindings)
            if (binding.key == key) emit liveChanged(key, binding.read());
    } else {
        emit restartNeeded(key);
    }
}

QString ConfigPanel::textFileProblem(const normlab::Config& config) {
    // The chosen text file is read and checked (UTF-8, long enough) when it or its size and date change,
    // so a bad file is flagged here as soon as it is chosen, not when Start is pressed.
    if (!normlab::task_data_can_fail(config.data)) return {};
    const QFileInfo file(QString::fromStdString(config.data.text_path));
    const QString stamp = QStringLiteral("%1|%2|%3|%4|%5")
                              .arg(file.absoluteFilePath())
                              .arg(file.size())
                              .arg(file.lastModified().toMSecsSinceEpoch())
                              .arg(config.model.seq_len)
                              .arg(QString::fromStdString(config.data.tokenizer));
    if (stamp == m_textFileStamp) return m_textFileProblem;
    m_textFileStamp = stamp;
    m_textFileProblem.clear();
    try {
        normlab::make_task(config.data, config.model.seq_len, config.train.seed);
    } catch (const normlab::InputError& error) {
        m_textFileProblem = QString::fromStdString(error.what());
    }
    return m_textFileProblem;
}

void ConfigPanel::revalidate() {
    QString problem;
    try {
        const normlab::Config edited = config();
        normlab::validate(edited);
        problem = textFileProblem(edited);
    } catch (const normlab::InputError& error) {
        problem = QString::fromStdString(error.what());
    }
    const bool changed = problem != m_problem;
    m_problem = problem;
    // Under the field just edited (else the first the message names), outlining every field it names.
    QStringList keys;
    for (const Binding& binding : m_bindings)
        if (binding.key == m_lastEdited || problem.contains(binding.key))
            binding.key == m_lastEdited ? keys.prepend(binding.key) : keys.append(binding.key);
    m_notices->show(problem, keys);
    updateResidualConstants();
    if (changed) emit validityChanged(problem.isEmpty());
}

void ConfigPanel::updateResidualConstants() {
    normlab::Config current = m_base;
    try {
        current = config();
    } catch (const normlab::InputError&) {
    }
    const auto& model = current.model;
    QString text;
    if (model.residual == normlab::Residual::DeepNorm && model.encoder_layers > 0) {
        text = tr("DeepNorm (DeepNet, encoder-decoder): decoder alpha = %1, beta = %2; encoder alpha = %3, "
                  "beta = %4")
                   .arg(normlab::effective_deepnorm_alpha(model, false), 0, 'f', 3)
                   .arg(normlab::effective_deepnorm_beta(model, false), 0, 'f', 3)
                   .arg(normlab::effective_deepnorm_alpha(model, true), 0, 'f', 3)
                   .arg(normlab::effective_deepnorm_beta(model, true), 0, 'f', 3);
    } else if (model.residual == normlab::Residual::DeepNorm) {
        text = tr("DeepNorm for %1 blocks: alpha = (2N)^1/4 = %2 on the shortcut, beta = (8N)^-1/4 = %3 on "
                  "V, W_o, FFN init")
                   .arg(model.layers)
                   .arg(normlab::effective_deepnorm_alpha(model), 0, 'f', 3)
                   .arg(normlab::effective_deepnorm_beta(model), 0, 'f', 3);
    } else if (model.residual == normlab::Residual::Admin) {
        text = model.admin_init == normlab::AdminInit::Closed
                   ? tr("Admin: omega = sqrt((S+1)/ln(S+1) - 1) = %1 for S = %2 sub-layers")
                         .arg(normlab::admin_closed_omega(normlab::residual_sublayers(model)), 0, 'f', 3)
                         .arg(normlab::residual_sublayers(model))
                   : tr("Admin: omega profiled per sub-layer on a batch at init");
    } else if (model.residual == normlab::Residual::ReZero) {
        text = tr("ReZero: x + alpha F(x), alpha = 0 at init (trained)");
    } else if (model.residual == normlab::Residual::B2t) {
        text = tr("B2T: each Post-LN block's input added to its last sum, before its last norm");
    } else if (model.residual == normlab::Residual::ResiDual) {
        text = tr("ResiDual: output = Post-LN stream + FinalNorm(input + every branch, unnormalised)");
    } else if (model.residual == normlab::Residual::DenseFormer) {
        const int last =
            static_cast<int>(normlab::dense_sources(model.layers - 1, model.denseformer_dilation).size());
        text = tr("DenseFormer: block i's successor reads a learned average of outputs 0..i (every %1), "
                  "identity at init; the last block averages %2 outputs")
                   .arg(model.denseformer_dilation)
                   .arg(last);
    } else if (model.residual == normlab::Residual::AttnRes) {
        text =
            tr("Attention Residuals: sub-layer l reads sum_i softmax_i(w_l . RMSNorm(v_i)) v_i over the "
               "embeddings and its l - 1 earlier branches (the stack's output: all %1); w_l = 0 at init (a "
               "plain average)")
                .arg(2 * model.layers);
    } else if (model.residual == normlab::Residual::Lns) {
        text = tr("LayerNorm Scaling: block l's input norms x 1/sqrt(l): block 2 x %1, block %2 x %3")
                   .arg(1.0 / std::sqrt(2.0), 0, 'f', 3)
                   .arg(model.layers)
                   .arg(1.0 / std::sqrt(static_cast<double>(model.layers)), 0, 'f', 3);
    }
    m_residualConstants->setText(text);
    m_residualConstants->setVisible(!text.isEmpty());
}

}  // namespace normlab::ui
