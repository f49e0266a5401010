// Recorded lessons shipped packed (<lesson>.tar.gz in the resources' recordings folder, written by
// scripts/record_lessons.sh): the shipped ones listed, and an archive unpacked once with tar (a
// required Debian package) into the user's cache folder, keyed by its content hash, to replay from.
#pragma once
#include <QString>
#include <QStringList>

namespace normlab::gui {

// The shipped recordings: <resource_dir>/recordings/*.tar.gz, sorted by name.
QStringList shippedRecordings();
bool isRecordingArchive(const QString& path);
// The folder `archive` unpacks to (the lesson's folder of run folders), unpacking it first when it is
// not in the cache yet; empty with `error` set when it cannot be read or unpacked.
QString unpackedRecording(const QString& archive, QString* error);

}  // namespace normlab::gui
