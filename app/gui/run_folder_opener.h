// Opens run folders in the window: each joins the TelemetryStore as an opened run (its own id and
// colour, marked as not trained here) and is read on a thread of its own in bounded chunks that the
// GUI thread absorbs as they arrive, so a large folder never blocks the window.
#pragma once
#include <QObject>
#include <QStringList>
#include <QThread>
#include <atomic>
#include <vector>

#include "ui/history/telemetry_store.h"

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
    int loading() const { return m_loading; }
    // Removes every opened run from the store (those still loading stop first).
    void closeAll();

  signals:
    // Every folder asked for so far is read to its end.
    void allLoaded();

  private:
    void absorb(const ui::RunUpdate& update, bool last, qint64 skippedLines);
    void joinThreads();

    ui::TelemetryStore& m_store;
    int m_nextId = kFirstOpenedId;
    int m_loading = 0;
    std::vector<QThread*> m_threads;
    std::atomic<bool> m_stopping{false};
};

}  // namespace normlab::gui
