// RunLibraryPanel: the scan (find_run_folders + RunFolderReader's config and summary, on a QThread),
// the table model, and the text and status filters.
#include "ui/controls/run_library_panel.h"

#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTableView>
#include <QThread>
#include <QVBoxLayout>
#include <optional>

#include "engine/core/errors.h"
#include "engine/io/run_folder_reader.h"
#include "engine/sweep/sweep_folder.h"

namespace normlab::ui {

struct RunLibraryPanel::Row {
    QString folder, name, status, placement, norm, residual;
    QDateTime date;
    qint64 steps = 0;
    std::optional<double> loss, valLoss;
    double lr = 0.0;
    int warmup = 0;
};

namespace {
enum Column { Name, Status, Date, Steps, Loss, ValLoss, Placement, Norm, Residual, Lr, Warmup, ColumnCount };
const char* const kHeaders[ColumnCount] = {"run",       "status", "date",     "steps", "loss",  "val loss",
                                           "placement", "norm",   "residual", "lr",    "warmup"};
const QString kSettingsKey = QStringLiteral("library/folders");

QString runsFolder() {
    const QString chosen = qEnvironmentVariable("NORMLAB_RUNS_DIR");
    return chosen.isEmpty() ? QDir::home().filePath(QStringLiteral("normlab-runs")) : chosen;
}

// The sweep folders in `root` (itself, or its sub-folders holding sweep.json), one row each: status
// "sweep: D/N finished", the base config's columns, and the date of its plan.
template <typename Row>
std::vector<Row> sweepRows(const QString& root) {
    std::vector<Row> rows;
    QStringList candidates{root};
    for (const QString& name : QDir(root).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        candidates << QDir(root).filePath(name);
    for (const QString& folder : candidates) {
        if (!QFileInfo::exists(QDir(folder).filePath(QStringLiteral("sweep.json")))) continue;
        try {
            const normlab::SweepPlan plan = normlab::load_sweep(folder.toStdString());
            int finished = 0;
            for (const normlab::SweepPoint& point : plan.points)
                finished += normlab::is_finished(normlab::point_progress(folder.toStdString(), point).state);
            Row row;
            row.folder = QDir(folder).absolutePath();
            row.name = QFileInfo(row.folder).fileName();
            row.status = QStringLiteral("sweep: %1/%2 finished").arg(finished).arg(plan.points.size());
            row.date = QFileInfo(QDir(folder).filePath(QStringLiteral("sweep.json"))).lastModified();
            row.steps = plan.base.train.steps;
            row.placement = QString::fromStdString(normlab::to_string(plan.base.model.norm_placement));
            row.norm = QString::fromStdString(normlab::to_string(plan.base.model.norm_type));
            row.residual = QString::fromStdString(normlab::to_string(plan.base.model.residual));
            row.lr = plan.base.train.lr;
            row.warmup = plan.base.train.warmup_steps;
            rows.push_back(std::move(row));
        } catch (const normlab::InputError&) {
            // a damaged plan: left out, like a folder that is not a run
        }
    }
    return rows;
}

// The text and status filters: a row passes when its status matches and some cell contains the text.
class LibraryFilter : public QSortFilterProxyModel {
  public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void set(const QString& text, const QString& status) {
        m_text = text;
        m_status = status;
        invalidateFilter();
    }

  protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
        const QAbstractItemModel& model = *sourceModel();
        if (!m_status.isEmpty() && !model.index(row, Status, parent).data().toString().startsWith(m_status))
            return false;
        if (m_text.isEmpty()) return true;
        for (int column = 0; column < ColumnCount; ++column)
            if (model.index(row, column, parent).data().toString().contains(m_text, Qt::CaseInsensitive))
                return true;
        return false;
    }

  private:
    QString m_text, m_status;
};

// An item that shows `text` and sorts by `key` (numbers sort as numbers, dates as dates).
QStandardItem* item(const QString& text, const QVariant& key) {
    auto* cell = new QStandardItem(text);
    cell->setData(key, Qt::UserRole);
    cell->setEditable(false);
    return cell;
}
}  // namespace

RunLibraryPanel::RunLibraryPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    auto* filters = new QHBoxLayout;
    m_filter = new QLineEdit;
    m_filter->setObjectName(QStringLiteral("libraryFilter"));
    m_filter->setPlaceholderText(tr("filter: name, placement, norm, ..."));
    m_filter->setClearButtonEnabled(true);
    m_status = new QComboBox;
    m_status->setObjectName(QStringLiteral("libraryStatus"));
    m_status->addItem(tr("any status"), QString());
    for (const char* status : {"completed", "diverged", "running", "stale", "stopped", "failed", "sweep"})
        m_status->addItem(QString::fromLatin1(status), QString::fromLatin1(status));
    filters->addWidget(m_filter, 1);
    filters->addWidget(m_status);
    layout->addLayout(filters);

    m_model = new QStandardItemModel(0, ColumnCount, this);
    for (int column = 0; column < ColumnCount; ++column)
        m_model->setHeaderData(column, Qt::Horizontal, QString::fromLatin1(kHeaders[column]));
    m_proxy = new LibraryFilter(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(Qt::UserRole);
    m_table = new QTableView;
    m_table->setObjectName(QStringLiteral("libraryTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(Date, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    layout->addWidget(m_table, 1);

    auto* buttons = new QHBoxLayout;
    auto* open = new QPushButton(tr("Open selected"));
    auto* add = new QPushButton(tr("Add folder..."));
    auto* rescan = new QPushButton(tr("Refresh"));
    buttons->addWidget(open);
    buttons->addStretch();
    buttons->addWidget(add);
    buttons->addWidget(rescan);
    layout->addLayout(buttons);

    connect(m_filter, &QLineEdit::textChanged, this, &RunLibraryPanel::applyFilters);
    connect(m_status, &QComboBox::currentIndexChanged, this, &RunLibraryPanel::applyFilters);
    connect(m_table, &QTableView::doubleClicked, this, [this] { emit openRequested(selectedFolders()); });
    connect(open, &QPushButton::clicked, this, [this] {
        if (!selectedFolders().isEmpty()) emit openRequested(selectedFolders());
    });
    connect(add, &QPushButton::clicked, this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Add a folder of run folders"));
        if (!folder.isEmpty()) addRoot(folder);
    });
    connect(rescan, &QPushButton::clicked, this, &RunLibraryPanel::refresh);
}

RunLibraryPanel::~RunLibraryPanel() {
    m_stopping.store(true);
    if (m_scan) m_scan->wait();
}

QStringList RunLibraryPanel::roots() const {
    QStringList roots{runsFolder()};
    for (const QString& folder : QSettings().value(kSettingsKey).toStringList())
        if (!roots.contains(folder)) roots << folder;
    return roots;
}

void RunLibraryPanel::addRoot(const QString& folder) {
    QStringList added = QSettings().value(kSettingsKey).toStringList();
    if (!added.contains(folder)) added << folder;
    QSettings().setValue(kSettingsKey, added);
    refresh();
}

void RunLibraryPanel::refresh() {
    if (m_scan) {
        m_stopping.store(true);
        m_scan->wait();
        delete m_scan;
        m_stopping.store(false);
    }
    m_scan = QThread::create([this, roots = roots()] {
        std::vector<Row> rows;
        for (const QString& root : roots) {
            for (Row& sweep : sweepRows<Row>(root)) rows.push_back(std::move(sweep));
            std::vector<std::string> folders;
            try {
                folders = normlab::find_run_folders(root.toStdString());
            } catch (const normlab::InputError&) {
                continue;  // a root that is missing or empty lists nothing
            }
            for (const std::string& folder : folders) {
                if (m_stopping.load()) return;
                try {
                    const normlab::RunFolderReader reader(folder);
                    const normlab::Config& config = reader.config();
                    const normlab::RunFolderSummary summary =
                        reader.summary().value_or(normlab::RunFolderSummary{});
                    Row row;
                    row.folder = QString::fromStdString(folder);
                    row.name = QFileInfo(row.folder).fileName();
                    row.status = QString::fromStdString(normlab::shown_status(
                        summary, static_cast<double>(QDateTime::currentSecsSinceEpoch())));
                    row.date = QFileInfo(row.folder + QStringLiteral("/config.json")).lastModified();
                    row.steps = summary.steps;
                    row.loss = summary.final_loss;
                    row.valLoss = summary.final_val_loss;
                    row.placement = QString::fromStdString(normlab::to_string(config.model.norm_placement));
                    row.norm = QString::fromStdString(normlab::to_string(config.model.norm_type));
                    row.residual = QString::fromStdString(normlab::to_string(config.model.residual));
                    row.lr = config.train.lr;
                    row.warmup = config.train.warmup_steps;
                    rows.push_back(std::move(row));
                } catch (const normlab::InputError&) {
                    // not a run after all: left out of the list
                }
            }
        }
        QMetaObject::invokeMethod(
            this, [this, rows = std::move(rows)] { showRows(rows); }, Qt::QueuedConnection);
    });
    m_scan->start();
}

void RunLibraryPanel::showRows(const std::vector<Row>& rows) {
    m_model->removeRows(0, m_model->rowCount());
    const auto number = [](const std::optional<double>& value) {
        return value ? item(QString::number(*value, 'f', 3), *value) : item(QStringLiteral("-"), 1e300);
    };
    for (const Row& row : rows) {
        QList<QStandardItem*> cells(ColumnCount);
        cells[Name] = item(row.name, row.name);
        cells[Name]->setData(row.folder, Qt::UserRole + 1);
        cells[Name]->setToolTip(row.folder);
        cells[Status] = item(row.status, row.status);
        cells[Date] = item(row.date.toString(QStringLiteral("yyyy-MM-dd HH:mm")), row.date);
        cells[Steps] = item(QString::number(row.steps), row.steps);
        cells[Loss] = number(row.loss);
        cells[ValLoss] = number(row.valLoss);
        cells[Placement] = item(row.placement, row.placement);
        cells[Norm] = item(row.norm, row.norm);
        cells[Residual] = item(row.residual, row.residual);
        cells[Lr] = item(QString::number(row.lr, 'g', 4), row.lr);
        cells[Warmup] = item(QString::number(row.warmup), row.warmup);
        m_model->appendRow(cells);
    }
    applyFilters();
    emit scanned();
}

void RunLibraryPanel::applyFilters() {
    static_cast<LibraryFilter*>(m_proxy)->set(m_filter->text().trimmed(), m_status->currentData().toString());
}

int RunLibraryPanel::rowCount() const {
    return m_model->rowCount();
}

int RunLibraryPanel::visibleCount() const {
    return m_proxy->rowCount();
}

void RunLibraryPanel::setFilterText(const QString& text) {
    m_filter->setText(text);
}

void RunLibraryPanel::setStatusFilter(const QString& status) {
    m_status->setCurrentIndex(std::max(0, m_status->findData(status)));
}

QStringList RunLibraryPanel::selectedFolders() const {
    QStringList folders;
    for (const QModelIndex& index : m_table->selectionModel()->selectedRows(Name))
        folders << index.data(Qt::UserRole + 1).toString();
    return folders;
}

void RunLibraryPanel::selectAll() {
    m_table->selectAll();
}

}  // namespace normlab::ui
