// The head/tail cut of a growing line (see line_split.h).
#include "ui/plots/line_split.h"

#include <algorithm>

namespace normlab::ui {

LineSplit splitLine(const QVector<QPointF>& shown, int headCount, const QVector<QPointF>& next) {
    const int size = static_cast<int>(next.size());
    const bool headKept = headCount > 1 && headCount <= size && headCount <= shown.size() &&
                          std::equal(next.begin(), next.begin() + headCount, shown.begin());
    if (headKept && size - headCount <= kTailMax) return {headCount, false};
    const int head = size > kTailKeep ? size - kTailKeep : 0;
    return {head, head != headCount || (head > 0 && !headKept)};
}

}  // namespace normlab::ui
