// Deterministic random numbers: SplitMix64 seeding + xoshiro256** generation, identical on every platform
// (no std:: distributions, whose output differs between standard libraries).
#pragma once
#include <cmath>
#include <cstdint>

namespace normlab {

// Mixes two 64-bit values into a well-spread seed (for per-step and per-stream generators).
inline uint64_t mix_seed(uint64_t a, uint64_t b) {
    uint64_t z = a + 0x9E3779B97F4A7C15ull * (b + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

class Rng {
  public:
    explicit Rng(uint64_t seed) {
        uint64_t s = seed;
        for (auto& word : m_state) {
            s += 0x9E3779B97F4A7C15ull;
            word = mix_seed(s, 0);
        }
    }

    uint64_t next_u64() {
        const uint64_t result = rotl(m_state[1] * 5, 7) * 9;
        const uint64_t t = m_state[1] << 17;
        m_state[2] ^= m_state[0];
        m_state[3] ^= m_state[1];
        m_state[1] ^= m_state[2];
        m_state[0] ^= m_state[3];
        m_state[2] ^= t;
        m_state[3] = rotl(m_state[3], 45);
        return result;
    }

    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

    // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-32 for our n).
    int below(int n) {
        return static_cast<int>((static_cast<unsigned __int128>(next_u64()) * static_cast<uint64_t>(n)) >>
                                64);
    }

    // Standard normal by Box-Muller (one value per call; simple and platform-independent).
    double normal() {
        double u1 = uniform();
        while (u1 <= 0.0) u1 = uniform();
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }

  private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t m_state[4];
};

}  // namespace normlab
