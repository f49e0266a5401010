// writeWholeFile: QByteArray in, engine's write_file_atomically underneath.
#include "ui/io/whole_file.h"

#include <string>

#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"

namespace normlab::ui {

QString writeWholeFile(const QString& path, const QByteArray& bytes) {
    try {
        normlab::write_file_atomically(path.toStdString(), std::string(bytes.constData(), bytes.size()));
    } catch (const normlab::InputError& error) {
        return QString::fromStdString(error.what());
    }
    return {};
}

}  // namespace normlab::ui
