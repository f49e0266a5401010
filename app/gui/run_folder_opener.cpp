// RunFolderOpener: a RunFolderReader per folder, polled to its end on a QThread; each poll's records
// cross to the GUI thread as a RunUpdate (queued), the last one with summary.json's ending.
#include "app/gui/run_folder_opener.h"

#include <QDir>
#include <QFileInfo>
#include <chrono>
#include <memory>
#include <thread>

#include "engine/core/errors.h"
#include "engine/io/run_folder_reader.h"

namespace normlab::gui {

namespace {
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
    : QObject(parent), m_store(store) {}

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
        ui::RunHistory& run = m_store.addRun(id, QFileInfo(QDir(folder).absolutePath()).fileName(),
                                             reader->config(), QDir(folder).absolutePath());
        run.source = QStringLiteral("opened");
        run.note = QString::fromStdString(reader->configNote());
        ++m_loading;
        QThread* thread = QThread::create([this, reader, id] { watch(*reader, id); });
        m_threads.push_back(thread);
        thread->start();
    }
    return problems;
}

void RunFolderOpener::watch(normlab::RunFolderReader& reader, int id) {
    // Reads the backlog in bounded polls, then, while summary.json says "running", polls about once a
    // second for what the writer appends; a run with nothing new for staleAfter() is marked stale.
    using Clock = std::chrono::steady_clock;
    int64_t lastStep = 0;
    bool backlogRead = false, stale = false;
    std::string lastStatus;
    int64_t lastSummarySteps = -1;
    Clock::time_point lastChange = Clock::now();
    while (!m_stopping.load()) {
        normlab::RunFolderReader::Update read = reader.poll();
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
            QMetaObject::invokeMethod(
                this,
                [this, update = std::move(update), backlogDone, skipped, nowStale,
                 restarted = read.restarted] { absorb(update, backlogDone, skipped, nowStale, restarted); },
                Qt::QueuedConnection);
        }
        stale = nowStale;
        backlogRead = backlogRead || !read.more;
        if (read.more) continue;
        if (!running) return;  // finished (or no summary at all): nothing more will come
        for (int slice = 0; slice < 20 && !m_stopping.load(); ++slice)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

void RunFolderOpener::absorb(const ui::RunUpdate& update, bool backlogDone, qint64 skippedLines, bool stale,
                             bool restarted) {
    ui::RunHistory* run = m_store.run(update.runId);
    if (!run) return;                    // closed meanwhile
    if (restarted) run->clearHistory();  // the writer started the file again
    run->skippedLines = skippedLines;
    run->stale = stale;
    m_store.absorb(ui::TelemetryBatch{{update}});
    if (backlogDone && --m_loading == 0) emit allLoaded();
}

void RunFolderOpener::closeAll() {
    joinThreads();
    m_loading = 0;
    std::vector<int> opened;
    for (const auto& [id, run] : m_store.runs())
        if (!run.source.isEmpty()) opened.push_back(id);
    for (int id : opened) m_store.removeRun(id);
}

}  // namespace normlab::gui
