// Shipped recordings and their unpacking (recording_archive.h).
#include "app/gui/recording_archive.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>

#include "engine/core/resource_dir.h"

namespace normlab::gui {

namespace {
QString hashOf(QFile& file) {
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(&file);
    return QString::fromLatin1(hash.result().toHex().left(16));
}

// The one folder an unpacked recording holds (its lesson's folder).
QString onlyFolderIn(const QString& dir) {
    const QStringList entries = QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    return entries.size() == 1 ? QDir(dir).filePath(entries.front()) : dir;
}
}  // namespace

QStringList shippedRecordings() {
    const QDir dir(
        QDir(QString::fromStdString(normlab::resource_dir())).filePath(QStringLiteral("recordings")));
    QStringList archives;
    for (const QString& name : dir.entryList({QStringLiteral("*.tar.gz")}, QDir::Files, QDir::Name))
        archives << dir.filePath(name);
    return archives;
}

bool isRecordingArchive(const QString& path) {
    return path.endsWith(QLatin1String(".tar.gz")) && QFileInfo(path).isFile();
}

QString unpackedRecording(const QString& archive, QString* error) {
    QFile file(archive);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QObject::tr("%1: cannot be read (%2)").arg(archive, file.errorString());
        return {};
    }
    const QString cache = QStandardPaths::writableLocation(QStandardPaths::CacheLocation);
    const QString target = QDir(cache).filePath(QStringLiteral("recordings/") + hashOf(file));
    if (QDir(target).exists()) return onlyFolderIn(target);
    // Unpacked beside its final place, then renamed: a half-unpacked recording is never replayed.
    const QString partial = target + QStringLiteral(".partial");
    QDir(partial).removeRecursively();
    if (!QDir().mkpath(partial)) {
        *error = QObject::tr("%1: cannot create %2").arg(archive, partial);
        return {};
    }
    QProcess tar;
    tar.start(QStringLiteral("tar"),
              {QStringLiteral("-xzf"), archive, QStringLiteral("-C"), partial,
               QStringLiteral("--no-same-owner"), QStringLiteral("--no-same-permissions")});
    if (!tar.waitForFinished(120000) || tar.exitStatus() != QProcess::NormalExit || tar.exitCode() != 0) {
        *error = QObject::tr("%1: tar could not unpack it: %2")
                     .arg(archive, QString::fromLocal8Bit(tar.readAllStandardError()).trimmed());
        QDir(partial).removeRecursively();
        return {};
    }
    if (!QDir().rename(partial, target)) {
        *error = QObject::tr("%1: cannot move the unpacked recording to %2").arg(archive, target);
        return {};
    }
    return onlyFolderIn(target);
}

}  // namespace normlab::gui
