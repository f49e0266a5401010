// Opens run folders in the window: each joins the TelemetryStore as an opened run (its own id and
// colour, marked as not trained here) and is read on a thread of its own in bounded chunks that the
// GUI thread absorbs as they arrive, so a large folder never blocks the window. A run still being
// written (summary.json says "running") is watched: its folder and files are watched for changes (new
// lines arrive within ~50 ms) with a poll about once a second behind that for network file systems,
// a file started again is read again, and a writer silent for a minute marks the run stale.
#pragma once
#include <QHash>
#include <QObject>
#include <QStringList>
#include <QThread>
#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "ui/history/telemetry_store.h"

namespace normlab {
class RunFolderReader;
}
class QFileSystemWatcher;

namespace normlab::gui {

class RunFolderOpener : public QObject {
    Q_OBJECT
  public:
    static constexpr int kFirstOpenedId = 1000;  // trained runs use 0, 1, ...

    explicit RunFolderOpener(ui::TelemetryStore& store, QObject* parent = nullptr);
    ~RunFolderOpener() override;  // stops and joins the loading threads

    // Adds each folder as an opened run and starts loading it. Returns one message per folder that
    // could not be opened (not a run folder), naming it; the others open regardless.
    QStringList open(const QStringList& folders);
    // Opens a seed group folder (group.json, from train --seeds) as one entry: its seeds' run folders
    // as hidden members and the group's mean with its band (TelemetryStore::addGroup). The problems,
    // naming each folder; seeds whose folder does not exist yet (a group still training) are left out.
    QStringList openGroup(const QString& folder);
    // Loads `folder` into the store's run `id` (an experiment's saved run), keeping its name and colour;
    // the problem, or empty. A later open or close of that id drops what is still on its way.
    QString openInto(const QString& folder, int id);
    // Stops loading run `id` (its updates still on their way are dropped); the run stays in the store.
    void forget(int id);
    // Folders whose backlog is not read yet (watching goes on after).
    int loading() const { return m_loading; }
    // How long a running folder may go without news before it is marked stale (default a minute).
    void setStaleAfter(std::chrono::milliseconds after) { m_staleAfter.store(after); }
    // The poll behind the file watcher, for file systems that send no change notices (default 1 s).
    void setPollInterval(std::chrono::milliseconds interval) { m_pollInterval.store(interval); }
    // Removes every opened folder's run from the store (those still loading stop); an experiment's saved
    // runs loaded with openInto stay.
    void closeAll();

  signals:
    // Every folder asked for so far is read to its end.
    void allLoaded();

  private:
    using WakeFlag = std::shared_ptr<std::atomic<bool>>;  // set by the file watcher, taken by the poll
    using DropFlag = std::shared_ptr<std::atomic<bool>>;  // set when the load's run id is forgotten
    // On the folder's thread, until the folder ends, the opener stops or `dropped` is set.
    void watch(normlab::RunFolderReader& reader, int id, const WakeFlag& wake, const DropFlag& dropped);
    void watchPaths(const QString& folder);  // the folder and its files (a replaced file drops its watch)
    void unwatch(const QString& folder);
    void wake(const QString& path);
    void absorb(const ui::RunUpdate& update, const DropFlag& dropped, bool backlogDone, qint64 skippedLines,
                bool stale, bool restarted);
    void joinThreads();
    // Starts reading `reader`'s folder into run `id` of the store (added already).
    void startLoading(const std::shared_ptr<normlab::RunFolderReader>& reader, int id, const QString& path);

    ui::TelemetryStore& m_store;
    int m_nextId = kFirstOpenedId;
    int m_loading = 0;
    std::vector<QThread*> m_threads;
    QFileSystemWatcher* m_watcher = nullptr;
    QHash<QString, WakeFlag> m_wakeFlags;  // by folder
    QHash<int, QString> m_folders;         // by run id
    // By run id: the load that may still fill it (forget() and a new load replace it); updates of an
    // older load, and of a forgotten id, are dropped.
    struct Load {
        std::shared_ptr<std::atomic<bool>> dropped;
        bool backlogDone = false;
    };
    QHash<int, Load> m_loads;
    std::atomic<bool> m_stopping{false};
    std::atomic<std::chrono::milliseconds> m_staleAfter{std::chrono::minutes(1)};
    std::atomic<std::chrono::milliseconds> m_pollInterval{std::chrono::seconds(1)};
};

}  // namespace normlab::gui
