// The run library: every run folder under the runs folder ($NORMLAB_RUNS_DIR, else ~/normlab-runs)
// and the folders the user added, as a sortable table (status, date, steps, final and validation loss,
// placement, norm, residual scheme, lr, warmup) filtered by text and status, and the sweep folders
// there (status "sweep: D/N finished"). Only summary.json and config.json (and sweep.json) are read,
// on a thread of its own. Double-click (or Open) opens the selected runs, a sweep as its map.
#pragma once
#include <QStringList>
#include <QWidget>
#include <atomic>

class QComboBox;
class QLineEdit;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTableView;
class QThread;

namespace normlab::ui {

class RunLibraryPanel : public QWidget {
    Q_OBJECT
  public:
    explicit RunLibraryPanel(QWidget* parent = nullptr);
    ~RunLibraryPanel() override;

    // The folders scanned: the runs folder first, then those added (kept in QSettings).
    QStringList roots() const;
    void addRoot(const QString& folder);
    // Scans the roots again (off the GUI thread); `scanned` follows.
    void refresh();
    int rowCount() const;      // runs listed
    int visibleCount() const;  // runs passing the filters
    void setFilterText(const QString& text);
    void setStatusFilter(const QString& status);  // "" for every status
    // The folders of the selected rows (after filtering and sorting).
    QStringList selectedFolders() const;
    void selectAll();

  signals:
    void openRequested(const QStringList& folders);
    void scanned();

  private:
    struct Row;
    void showRows(const std::vector<Row>& rows);
    void applyFilters();

    QStandardItemModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QTableView* m_table = nullptr;
    QLineEdit* m_filter = nullptr;
    QComboBox* m_status = nullptr;
    QThread* m_scan = nullptr;
    std::atomic<bool> m_stopping{false};
};

}  // namespace normlab::ui
