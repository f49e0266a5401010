// File > New run from a Hugging Face config: a Llama config.json becomes one run with the model keys of
// the config (the panel's training keys kept), under the config folder's name; a config with rope
// scaling is refused naming the key, and the run loaded before stays as it was.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/main_window.h"
#include "ui/controls/config_panel.h"

using normlab::gui::MainWindow;

class HfImportTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { qputenv("NORMLAB_RUNS_DIR", m_dir.filePath(QStringLiteral("runs")).toUtf8()); }
    void llamaConfigBecomesTheRunAndRopeScalingIsRefused();

  private:
    QString writeConfig(const QString& folder, const QByteArray& json) {
        QDir(m_dir.path()).mkpath(folder);
        QFile file(m_dir.filePath(folder + QStringLiteral("/config.json")));
        if (!file.open(QIODevice::WriteOnly)) return {};
        file.write(json);
        return file.fileName();
    }
    QTemporaryDir m_dir;
};

void HfImportTest::llamaConfigBecomesTheRunAndRopeScalingIsRefused() {
    MainWindow window;
    window.setScripted(true);
    normlab::Config start = window.configPanel().config();
    start.train.lr = 0.00123;
    window.loadConfig(start, QStringLiteral("before"));

    const QByteArray llama = R"({"model_type": "llama", "vocab_size": 300, "hidden_size": 48,
        "intermediate_size": 128, "num_hidden_layers": 3, "num_attention_heads": 6, "num_key_value_heads": 2,
        "max_position_embeddings": 40, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
        "tie_word_embeddings": true, "bos_token_id": 1})";
    const QString error = window.loadHuggingFaceConfig(writeConfig(QStringLiteral("tiny-llama"), llama));
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const normlab::Config loaded = window.configPanel().config();
    QCOMPARE(loaded.model.d_model, 48);
    QCOMPARE(loaded.model.heads, 6);
    QCOMPARE(loaded.model.kv_heads, 2);
    QCOMPARE(loaded.model.layers, 3);
    QCOMPARE(loaded.model.seq_len, 40);
    QCOMPARE(loaded.model.vocab_size, 300);
    QCOMPARE(loaded.model.ffn, normlab::FeedForward::SwiGlu);
    QCOMPARE(loaded.model.position, normlab::Position::Rope);
    QCOMPARE(loaded.model.norm_type, normlab::NormType::RmsNorm);
    QCOMPARE(loaded.model.rope_theta, 500000.0);
    QVERIFY(loaded.model.tie_embeddings);
    QVERIFY(!loaded.model.bias);
    QCOMPARE(loaded.train.lr, 0.00123);  // the training keys stay the panel's

    QByteArray scaled = llama;
    scaled.replace("\"bos_token_id\": 1", "\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0}");
    const QString refused = window.loadHuggingFaceConfig(writeConfig(QStringLiteral("scaled"), scaled));
    QVERIFY2(refused.contains(QStringLiteral("rope_scaling.rope_type = yarn")), qPrintable(refused));
    QCOMPARE(window.configPanel().config().model.d_model, 48);  // unchanged by the refusal
    window.closeWithoutAsking();
}

QTEST_MAIN(HfImportTest)
#include "test_hf_import.moc"
