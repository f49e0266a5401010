// File > New run from a Hugging Face config: the current settings with the model keys of a transformers
// config.json (Llama or GPT-2, as `normlab-cli train --hf-config` reads it); a refused key is shown by
// name and nothing changes. Loading the checkpoint's weights stays with the command line.
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>

#include "app/gui/experiment_document.h"
#include "app/gui/main_window.h"
#include "engine/io/hf_config.h"
#include "ui/controls/config_panel.h"

namespace normlab::gui {

QString MainWindow::loadHuggingFaceConfig(const QString& path) {
    try {
        const HfModel hf = read_hf_config(path.toStdString(), HfUse::Train);
        Config config = m_configPanel->config();
        for (const std::string& assignment : hf.overrides) apply_override(config, assignment);
        validate(config);
        const QFileInfo file(path);
        const QString name = file.isDir() ? file.fileName() : file.dir().dirName();
        loadConfig(config, QStringLiteral("hf %1").arg(name));
    } catch (const std::exception& error) {
        return QString::fromStdString(error.what());
    }
    return {};
}

void MainWindow::addHuggingFaceAction(QMenu* file) {
    file->addAction(tr("New run from a &Hugging Face config..."), this, [this] {
        if (!m_document->confirmDiscard()) return;
        const QString path = QFileDialog::getOpenFileName(
            this, tr("A Hugging Face config.json (Llama or GPT-2)"), QString(), tr("config.json (*.json)"));
        if (path.isEmpty()) return;
        const QString error = loadHuggingFaceConfig(path);
        if (!error.isEmpty()) showMessage(tr("Cannot build this model"), error);
    });
}

}  // namespace normlab::gui
