// normlab_round_formats FORMAT: float32 values (little-endian) from standard input, each rounded to
// FORMAT (engine/core/number_formats.h) on standard output, for tests/parity/precision_parity.py to
// compare with PyTorch's casts. Exit 2 for a format that is not one.
#include <cstdio>
#include <vector>

#include "engine/core/number_formats.h"

int main(int argc, char** argv) {
    const auto format = argc == 2 ? normlab::number_format_named(argv[1]) : std::nullopt;
    if (!format) {
        std::fprintf(stderr, "usage: normlab_round_formats FORMAT < float32s > float32s; FORMAT: %s\n",
                     normlab::number_format_names().c_str());
        return 2;
    }
    std::vector<float> values(1 << 16);
    for (size_t got; (got = std::fread(values.data(), sizeof(float), values.size(), stdin)) > 0;) {
        normlab::round_to_format(values.data(), got, *format);
        if (std::fwrite(values.data(), sizeof(float), got, stdout) != got) return 1;
    }
    return 0;
}
