// Whole-or-nothing writes of the window's files (figures, chart data, experiment files), through the
// engine's atomic writer: a unique temporary file, every write checked, fsync, rename, directory fsync.
// A full disk or a file size limit leaves the old file as it was and says so.
#pragma once
#include <QByteArray>
#include <QString>

namespace normlab::ui {

// Writes `bytes` to `path`; the error ("cannot write PATH: ..."), or empty on success.
QString writeWholeFile(const QString& path, const QByteArray& bytes);

}  // namespace normlab::ui
