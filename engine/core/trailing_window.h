// A trailing window of the last N values in storage allocated once: pushing into a full window drops
// the oldest value. Used where a per-step history must not allocate (loss spikes, step timing).
#pragma once
#include <cstddef>
#include <vector>

namespace normlab {

template <class T>
class TrailingWindow {
  public:
    explicit TrailingWindow(size_t capacity) : m_values(capacity) {}

    size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    bool full() const { return m_size == m_values.size(); }

    // The i-th value, oldest first.
    const T& operator[](size_t i) const { return m_values[(m_oldest + i) % m_values.size()]; }

    void push(const T& value) {
        if (m_values.empty()) return;
        if (full()) drop_oldest();
        m_values[(m_oldest + m_size) % m_values.size()] = value;
        ++m_size;
    }

    void drop_oldest() {
        if (m_size == 0) return;
        m_oldest = (m_oldest + 1) % m_values.size();
        --m_size;
    }

  private:
    std::vector<T> m_values;
    size_t m_oldest = 0;
    size_t m_size = 0;
};

}  // namespace normlab
