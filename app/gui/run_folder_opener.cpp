// RunFolderOpener: a RunFolderReader per folder, polled to its end on a QThread; each poll's records
// cross to the GUI thread as a RunUpdate (queued), the last one with summary.json's ending.
#include "app/gui/run_folder_opener.h"

#include <QDir>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <algorithm>
#include <chrono>
#include <memory>
#include <semaphore>
#include <thread>

#include "engine/core/errors.h"
#include "engine/io/run_folder_reader.h"
#include "engine/io/run_group.h"

namespace normlab::gui {

namespace {
// Backlogs parsed at once, across all opened folders: one per core. Twenty folders read at once would
// only hold twenty chunks in memory while the cores take turns.
std::counting_semaphore<>& parseSlots() {
    static std::counting_semaphore<> available(std::max(1u, std::thread::hardware_concurrency()));
    return available;
}
constexpr size_t kPollBytes = size_t{4} << 20;  // one chunk of a backlog (about 10 ms of parsing)

// The ending summary.json records (a folder without one reads as still running).
void applySummary(ui::RunUpdate& update, const std::optional<normlab::RunFolderSummary>& summary) {
    if (!summary) return;
    update.status = normlab::status_from_summary(summary->status);
    update.step = std::max(update.step, summary->steps);
    if (summary->diverged_at) update.divergedAt = *summary->diverged_at;
    update.firstBadLayer = summary->first_bad_layer;
}
}  // namespace

RunFolderOpener::RunFolderOpener(ui::TelemetryStore& store, QObject* parent)
    : QObject(parent), m_store(store), m_watcher(new QFileSystemWatcher(this)) {
    connect(m_watcher, &QFileSystemWatcher::directoryChanged, this, [this](const QString& folder) {
        watchPaths(folder);  // a file replaced by rename is watched again
        wake(folder);
    });
    connect(m_watcher, &QFileSystemWatcher::fileChanged, this,
            [this](const QString& file) { wake(QFileInfo(file).absolutePath()); });
}

void RunFolderOpener::watchPaths(const QString& folder) {
    QStringList paths{folder};
    for (const char* name : {"metrics.jsonl", "events.jsonl", "summary.json"})
        if (const QString file = QDir(folder).filePath(QLatin1String(name)); QFileInfo::exists(file))
            paths << file;
    const QStringList watched = m_watcher->files() + m_watcher->directories();
    paths.removeIf([&watched](const QString& path) { return watched.contains(path); });
    if (!paths.isEmpty()) m_watcher->addPaths(paths);
}

void RunFolderOpener::unwatch(const QString& folder) {
    QStringList paths;
    for (const QString& path : m_watcher->files() + m_watcher->directories())
        if (path == folder || QFileInfo(path).absolutePath() == folder) paths << path;
    if (!paths.isEmpty()) m_watcher->removePaths(paths);
    m_wakeFlags.remove(folder);
}

void RunFolderOpener::wake(const QString& folder) {
    if (const auto flag = m_wakeFlags.find(folder); flag != m_wakeFlags.end()) (*flag)->store(true);
}

RunFolderOpener::~RunFolderOpener() {
    joinThreads();
}

void RunFolderOpener::joinThreads() {
    m_stopping.store(true);
    for (QThread* thread : m_threads) {
        thread->wait();
        delete thread;
    }
    m_threads.clear();
    m_stopping.store(false);
}

QStringList RunFolderOpener::open(const QStringList& folders) {
    QStringList problems;
    for (const QString& folder : folders) {
        std::shared_ptr<normlab::RunFolderReader> reader;
        try {
            reader = std::make_shared<normlab::RunFolderReader>(QDir(folder).absolutePath().toStdString());
        } catch (const normlab::InputError& error) {
            problems << QString::fromStdString(error.what());
            continue;
        }
        const int id = m_nextId++;
        const QString path = QDir(folder).absolutePath();
        m_store.addRun(id, QFileInfo(path).fileName(), reader->config(), path);
        startLoading(reader, id, path);
    }
    return problems;
}

QStringList RunFolderOpener::openGroup(const QString& folder) {
    const QString path = QDir(folder).absolutePath();
    std::vector<normlab::GroupMember> members;
    normlab::Config config;
    try {
        members = normlab::group_members(path.toStdString());
        config = normlab::read_group_file(
                     QDir(path).filePath(QLatin1String(normlab::kGroupFileName)).toStdString())
                     .config;
    } catch (const normlab::InputError& error) {
        return {QString::fromStdString(error.what())};
    }
    const int groupId = m_nextId++;
    QStringList problems;
    std::vector<int> ids;
    std::vector<uint64_t> seeds;
    for (const normlab::GroupMember& member : members) {
        const QString seedFolder = QString::fromStdString(member.folder);
        if (!QFileInfo(seedFolder).isDir()) continue;  // not started yet
        const int id = m_nextId;
        problems << open({seedFolder});
        if (!m_store.run(id)) continue;
        ids.push_back(id);
        if (member.seed) seeds.push_back(*member.seed);
    }
    if (ids.empty()) {
        problems << tr("%1: none of its %2 seeds' run folders can be read yet").arg(path).arg(members.size());
        return problems;
    }
    ui::RunHistory& group =
        m_store.addGroup(groupId, QFileInfo(path).fileName(), config, path, ids, ui::seedListText(seeds));
    group.bands->expected = members.size();
    if (ids.size() < members.size())
        group.note =
            tr("%1 of the group's %2 seeds have a run folder to read").arg(ids.size()).arg(members.size());
    return problems;
}

QString RunFolderOpener::openInto(const QString& folder, int id) {
    std::shared_ptr<normlab::RunFolderReader> reader;
    try {
        reader = std::make_shared<normlab::RunFolderReader>(QDir(folder).absolutePath().toStdString());
    } catch (const normlab::InputError& error) {
        return QString::fromStdString(error.what());
    }
    forget(id);
    const ui::RunHistory* saved = m_store.run(id);
    const QString name = saved ? saved->name : QFileInfo(folder).fileName();
    const std::optional<QColor> colour = saved ? std::optional(saved->colour) : std::nullopt;
    const bool visible = !saved || saved->visible;
    const QString path = QDir(folder).absolutePath();
    ui::RunHistory& run = m_store.addRun(id, name, reader->config(), path);
    if (colour) run.colour = *colour;
    run.visible = visible;
    startLoading(reader, id, path);
    return {};
}

void RunFolderOpener::forget(int id) {
    const auto load = m_loads.find(id);
    if (load == m_loads.end()) return;
    load->dropped->store(true);  // its thread stops at its next poll
    if (!load->backlogDone && --m_loading == 0) emit allLoaded();
    m_loads.erase(load);
    if (const QString folder = m_folders.take(id); !folder.isEmpty()) unwatch(folder);
}

void RunFolderOpener::startLoading(const std::shared_ptr<normlab::RunFolderReader>& reader, int id,
                                   const QString& path) {
    ui::RunHistory& run = *m_store.run(id);
    run.source = reader->source().empty()
                     ? QStringLiteral("opened")
                     : QStringLiteral("opened from %1").arg(QString::fromStdString(reader->source()));
    run.note = QString::fromStdString(reader->configNote());
    run.knownKeys = reader->knownKeys();
    ++m_loading;
    const WakeFlag wakeFlag = std::make_shared<std::atomic<bool>>(false);
    const auto dropped = std::make_shared<std::atomic<bool>>(false);
    m_loads.insert(id, Load{dropped});
    m_wakeFlags.insert(path, wakeFlag);
    m_folders.insert(id, path);
    watchPaths(path);
    QThread* thread =
        QThread::create([this, reader, id, wakeFlag, dropped] { watch(*reader, id, wakeFlag, dropped); });
    m_threads.push_back(thread);
    thread->start();
}

void RunFolderOpener::watch(normlab::RunFolderReader& reader, int id, const WakeFlag& wake,
                            const DropFlag& dropped) {
    // Reads the backlog in bounded polls, then, while summary.json says "running", polls when the file
    // watcher says something changed, or after a second at the latest; a run with nothing new for
    // staleAfter() is marked stale.
    using Clock = std::chrono::steady_clock;
    int64_t lastStep = 0;
    bool backlogRead = false, stale = false;
    std::string lastStatus;
    int64_t lastSummarySteps = -1;
    Clock::time_point lastChange = Clock::now();
    const auto pending = std::make_shared<std::atomic<int>>(0);  // updates posted, not yet absorbed
    while (!m_stopping.load() && !dropped->load()) {
        // Back-pressure: the next chunk waits until the GUI thread has taken the last one, so a backlog
        // never queues up in memory faster than the charts absorb it.
        while (pending->load() > 0 && !m_stopping.load() && !dropped->load())
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        parseSlots().acquire();
        normlab::RunFolderReader::Update read = reader.poll(kPollBytes);
        parseSlots().release();
        const std::optional<normlab::RunFolderSummary> summary = reader.summary();
        const bool running = summary && (summary->status == "running" || summary->status.empty());
        const bool summaryChanged =
            summary && (summary->status != lastStatus || summary->steps != lastSummarySteps);
        if (summary) lastStatus = summary->status, lastSummarySteps = summary->steps;
        const bool changed =
            !read.records.empty() || !read.events.empty() || summaryChanged || read.restarted;
        if (changed) lastChange = Clock::now();
        const bool nowStale = running && Clock::now() - lastChange > m_staleAfter.load();
        const bool backlogDone = !backlogRead && !read.more;
        if (changed || backlogDone || nowStale != stale) {
            ui::RunUpdate update;
            update.runId = id;
            if (read.restarted) lastStep = 0;
            if (!read.records.empty()) lastStep = read.records.back().step;
            update.step = lastStep;
            update.records = std::move(read.records);
            update.events = std::move(read.events);
            applySummary(update, summary);
            const qint64 skipped = reader.skippedLines();
            pending->fetch_add(1);
            QMetaObject::invokeMethod(
                this,
                [this, pending, dropped, update = std::move(update), backlogDone, skipped, nowStale,
                 restarted = read.restarted] {
                    absorb(update, dropped, backlogDone, skipped, nowStale, restarted);
                    pending->fetch_sub(1);
                },
                Qt::QueuedConnection);
        }
        stale = nowStale;
        backlogRead = backlogRead || !read.more;
        if (read.more) continue;
        if (!running) return;  // finished (or no summary at all): nothing more will come
        const Clock::time_point pollAt = Clock::now() + m_pollInterval.load();
        while (Clock::now() < pollAt && !m_stopping.load() && !wake->exchange(false))
            std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
}

void RunFolderOpener::absorb(const ui::RunUpdate& update, const DropFlag& dropped, bool backlogDone,
                             qint64 skippedLines, bool stale, bool restarted) {
    if (dropped->load()) return;  // forgotten: the id may hold another run now
    ui::RunHistory* run = m_store.run(update.runId);
    if (!run) return;                                 // closed meanwhile
    if (restarted) m_store.restartRun(update.runId);  // the writer started the file again
    run->skippedLines = skippedLines;
    run->stale = stale;
    m_store.absorb(ui::TelemetryBatch{{update}});
    if (update.status != normlab::RunStatus::Running) unwatch(m_folders.value(update.runId));
    if (!backlogDone) return;
    if (const auto load = m_loads.find(update.runId); load != m_loads.end()) load->backlogDone = true;
    if (--m_loading > 0) return;
    m_store.rebuildGroups();  // a seed group's mean is whole before anyone told "loaded" looks at it
    emit allLoaded();
}

void RunFolderOpener::closeAll() {
    // Opened folders only: an experiment's saved runs loaded into their own ids stay.
    std::vector<int> opened;
    for (const auto& [id, run] : m_store.runs())
        if (id >= kFirstOpenedId) opened.push_back(id);
    for (int id : opened) {
        forget(id);
        m_store.removeRun(id);
    }
}

}  // namespace normlab::gui
