// Bounded history by pairwise compaction: samples fill buckets of `span` samples; when the bucket
// count reaches capacity, neighbours merge and the span doubles. Memory stays O(capacity) however
// long the run, and a Bucket's absorb() decides what survives a merge (min/max, so spikes stay).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace normlab::ui {

template <class Bucket>
class BucketHistory {
  public:
    explicit BucketHistory(int capacity) : m_capacity(capacity < 2 ? 2 : capacity) {}

    void append(const Bucket& sample) {
        if (!m_buckets.empty() && m_in_last < m_span) {
            m_buckets.back().absorb(sample);
            ++m_in_last;
            return;
        }
        if (static_cast<int>(m_buckets.size()) >= m_capacity) compact();
        m_buckets.push_back(sample);
        m_in_last = 1;
    }

    const std::vector<Bucket>& buckets() const { return m_buckets; }
    int64_t span() const { return m_span; }
    bool empty() const { return m_buckets.empty(); }
    void clear() {
        m_buckets.clear();
        m_span = 1;
        m_in_last = 0;
    }

  private:
    void compact() {
        std::vector<Bucket> merged;
        merged.reserve(m_buckets.size() / 2 + 1);
        for (std::size_t i = 0; i < m_buckets.size(); i += 2) {
            Bucket bucket = m_buckets[i];
            if (i + 1 < m_buckets.size()) bucket.absorb(m_buckets[i + 1]);
            merged.push_back(bucket);
        }
        m_buckets.swap(merged);
        m_span *= 2;
        // The last merged bucket may be a lone one: it has room for span/2 more samples.
        m_in_last = m_span;
    }

    int m_capacity;
    std::vector<Bucket> m_buckets;
    int64_t m_span = 1;     // samples per full bucket
    int64_t m_in_last = 0;  // samples in the last bucket
};

}  // namespace normlab::ui
