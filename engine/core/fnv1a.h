// FNV-1a, 64 bits: the one content hash NormLab records (corpus and tokenizer files in provenance.json,
// the key of a trained tokenizer in the cache). Not cryptographic: it names contents, it guards nothing.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace normlab {

class Fnv1a64 {
  public:
    void update(std::string_view bytes) {
        for (const char byte : bytes) {
            m_hash ^= static_cast<unsigned char>(byte);
            m_hash *= 1099511628211ull;
        }
    }
    uint64_t value() const { return m_hash; }
    // 16 lower-case hex digits, as provenance.json writes it.
    std::string hex() const {
        char text[17];
        std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(m_hash));
        return text;
    }

  private:
    uint64_t m_hash = 14695981039346656037ull;
};

inline std::string fnv1a64_hex(std::string_view bytes) {
    Fnv1a64 hash;
    hash.update(bytes);
    return hash.hex();
}

}  // namespace normlab
