// The control panel's spin boxes take their limits from the engine's key table: each one's range is
// its key's range (within what a QSpinBox holds), so the panel accepts what validate() accepts and a
// loaded config's value is never clamped to a narrower hand-written limit. The tokenizer row takes
// bytes, bpe:N and a file, and says in place what is wrong with a bad one; the precision rows apply
// live, and the loss scale row takes none, dynamic, dynamic:N and a factor.
#include <QComboBox>
#include <QDir>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <limits>

#include "engine/config/config.h"
#include "engine/config/key_range.h"
#include "ui/controls/config_panel.h"

class ConfigPanelTest : public QObject {
    Q_OBJECT
  private slots:
    void spinBoxRangesAreTheKeyTablesRanges();
    void warmupStepsStartAtOneAndEndWhereTheKeyEnds();
    void aConfigAtTheEngineLimitsLoadsUnclamped();
    void theTokenizerRowTakesEachFormAndFlagsABadOneInPlace();
    void precisionAndLossScaleApplyLiveAndABadScaleIsFlagged();
};

namespace {
constexpr double kIntMax = std::numeric_limits<int>::max();
}

void ConfigPanelTest::spinBoxRangesAreTheKeyTablesRanges() {
    normlab::ui::ConfigPanel panel;
    int checked = 0;
    for (QSpinBox* spin : panel.findChildren<QSpinBox*>()) {
        const QString key = spin->objectName();
        if (!key.contains(QLatin1Char('.')) && key != QLatin1String("threads")) continue;  // the warmup row's
        const std::optional<normlab::KeyRange> range = normlab::config_key_range(key.toStdString());
        QVERIFY2(range.has_value(), qPrintable(key));
        QCOMPARE(spin->minimum(), static_cast<int>(range->lo));
        QCOMPARE(spin->maximum(), static_cast<int>(std::min(range->hi, kIntMax)));
        ++checked;
    }
    QCOMPARE(checked,
             20);  // every integer control, model.kv_heads, base width and depth, DenseFormer dilation
}

void ConfigPanelTest::warmupStepsStartAtOneAndEndWhereTheKeyEnds() {
    normlab::ui::ConfigPanel panel;
    auto* steps = panel.findChild<QSpinBox*>(QStringLiteral("warmupSteps"));
    QVERIFY(steps);
    QCOMPARE(steps->minimum(), 1);  // 0 steps is the "on" box unticked
    QCOMPARE(steps->maximum(),
             static_cast<int>(std::min(normlab::config_key_range("train.warmup_steps")->hi, kIntMax)));
}

void ConfigPanelTest::aConfigAtTheEngineLimitsLoadsUnclamped() {
    normlab::Config config;
    config.model.d_model = 8192;  // above the panel's old limit of 4096
    config.model.heads = 256;     // above its old 128
    config.model.layers = 1000;   // above its old 512
    normlab::validate(config);
    normlab::ui::ConfigPanel panel;
    panel.setConfig(config);
    QVERIFY2(panel.problem().isEmpty(), qPrintable(panel.problem()));
    const normlab::Config shown = panel.config();
    QCOMPARE(shown.model.d_model, 8192);
    QCOMPARE(shown.model.heads, 256);
    QCOMPARE(shown.model.layers, 1000);
}

void ConfigPanelTest::theTokenizerRowTakesEachFormAndFlagsABadOneInPlace() {
    QTemporaryDir cache;
    qputenv("XDG_CACHE_HOME", cache.path().toUtf8());
    normlab::ui::ConfigPanel panel;
    panel.setConfig(normlab::Config{});
    auto* tokenizer = panel.findChild<QComboBox*>(QStringLiteral("tokenizer"));
    QVERIFY(tokenizer && tokenizer->isEditable());
    QCOMPARE(tokenizer->currentText(), QStringLiteral("bytes"));
    QSignalSpy restarts(&panel, &normlab::ui::ConfigPanel::restartNeeded);
    tokenizer->setCurrentIndex(tokenizer->findText(QStringLiteral("bpe:512")));
    emit tokenizer->activated(tokenizer->currentIndex());  // a choice from the list applies at once
    QCOMPARE(panel.config().data.tokenizer, std::string("bpe:512"));
    QVERIFY2(panel.problem().isEmpty(), qPrintable(panel.problem()));  // trained on the corpus, and cached
    QCOMPARE(restarts.count(), 1);
    QVERIFY(!QDir(cache.filePath(QStringLiteral("normlab/tokenizers"))).isEmpty());
    // Typed text applies when editing finishes; a malformed or unsupported one is flagged where it was typed.
    const auto type = [tokenizer](const QString& text) {
        tokenizer->lineEdit()->setText(text);
        tokenizer->lineEdit()->setModified(true);
        emit tokenizer->lineEdit()->editingFinished();
    };
    type(QStringLiteral("bpe:60000"));
    QVERIFY2(panel.problem().contains(QStringLiteral("holds at most")), qPrintable(panel.problem()));
    type(QStringLiteral("bpe:x"));
    QVERIFY2(panel.problem().contains(QStringLiteral("data.tokenizer")), qPrintable(panel.problem()));
    type(cache.filePath(QStringLiteral("missing.model")));
    QVERIFY2(panel.problem().contains(QStringLiteral("does not exist")), qPrintable(panel.problem()));
    // A loaded config shows its tokenizer, a path included, reads back unchanged and asks no restart.
    normlab::Config config;
    config.data.tokenizer = "runs/a run/tokenizer.model";
    const qsizetype asked = restarts.count();
    panel.setConfig(config);
    QCOMPARE(restarts.count(), asked);
    QCOMPARE(tokenizer->currentText(), QStringLiteral("runs/a run/tokenizer.model"));
    QCOMPARE(panel.config().data.tokenizer, config.data.tokenizer);
    qunsetenv("XDG_CACHE_HOME");
}

void ConfigPanelTest::precisionAndLossScaleApplyLiveAndABadScaleIsFlagged() {
    normlab::ui::ConfigPanel panel;
    panel.setConfig(normlab::Config{});
    QSignalSpy live(&panel, &normlab::ui::ConfigPanel::liveChanged);
    QSignalSpy restarts(&panel, &normlab::ui::ConfigPanel::restartNeeded);
    auto* precision = panel.findChild<QComboBox*>(QStringLiteral("train.precision"));
    auto* scale = panel.findChild<QComboBox*>(QStringLiteral("train.loss_scale"));
    QVERIFY(precision && scale && scale->isEditable());
    QCOMPARE(precision->count(), 4);  // the number formats' table
    precision->setCurrentIndex(precision->findData(QStringLiteral("fp16")));
    QCOMPARE(panel.config().train.precision, normlab::NumberFormat::Fp16);
    scale->setCurrentIndex(scale->findText(QStringLiteral("dynamic")));
    emit scale->activated(scale->currentIndex());
    QCOMPARE(panel.config().train.loss_scale, std::string("dynamic"));
    const auto type = [scale](const QString& text) {
        scale->lineEdit()->setText(text);
        scale->lineEdit()->setModified(true);
        emit scale->lineEdit()->editingFinished();
    };
    type(QStringLiteral("dynamic:1e9"));
    QCOMPARE(panel.config().train.loss_scale, std::string("dynamic:1e9"));
    QVERIFY2(panel.problem().isEmpty(), qPrintable(panel.problem()));
    QCOMPARE(restarts.count(), 0);  // both keys are live
    QVERIFY(live.count() >= 3);
    QCOMPARE(live.back().at(0).toString(), QStringLiteral("train.loss_scale"));
    type(QStringLiteral("zero"));
    QVERIFY2(panel.problem().contains(QStringLiteral("train.loss_scale")), qPrintable(panel.problem()));
    normlab::Config config;
    config.train.loss_scale = "1024";
    panel.setConfig(config);
    QCOMPARE(scale->currentText(), QStringLiteral("1024"));
    QVERIFY2(panel.problem().isEmpty(), qPrintable(panel.problem()));
}

QTEST_MAIN(ConfigPanelTest)
#include "test_config_panel.moc"
