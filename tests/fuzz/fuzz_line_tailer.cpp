// Feeds a file appended in chunks to a LineTailer that polls after each chunk: byte 0 says how many
// control bytes follow (chunk lengths and poll sizes), the rest is the file. Beyond no crash: the
// lines it yields equal the complete lines of the whole file ('\r' dropped), with no restart, and the
// offset and partial line match what was appended. The tailer's line cap is small (16 to 4111 bytes,
// from the first control byte) so that skipping over-long lines is fuzzed too.
#include "engine/io/line_tailer.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

// The newline-ended lines of `text` without their newline and one trailing '\r'; those longer than
// `cap` (before dropping the '\r') are counted in `long_lines` instead.
std::vector<std::string> complete_lines(std::string_view text, size_t cap, int64_t& long_lines) {
    std::vector<std::string> lines;
    for (size_t newline = text.find('\n'); newline != std::string_view::npos; newline = text.find('\n')) {
        std::string line(text.substr(0, newline));
        text.remove_prefix(newline + 1);
        if (line.size() > cap) {
            ++long_lines;
            continue;
        }
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(std::move(line));
    }
    return lines;
}

// Polls until the tailer has read everything appended, collecting its lines.
void drain(normlab::LineTailer& tailer, size_t max_bytes, std::vector<std::string>& lines,
           int64_t& long_lines) {
    for (;;) {
        normlab::LineTailer::Poll poll = tailer.poll(max_bytes);
        FUZZ_CHECK(!poll.restarted && !poll.missing, "an appended file restarted or went missing");
        long_lines += poll.longLines;
        for (std::string& line : poll.lines) lines.push_back(std::move(line));
        if (!poll.more) return;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const size_t control_size = std::min<size_t>(data[0] % 32, size - 1);
    const uint8_t* control = data + 1;
    const std::string_view content = normlab::fuzz::as_text(data + 1 + control_size, size - 1 - control_size);

    const std::filesystem::path path = normlab::fuzz::fresh_dir("line_tailer") / "metrics.jsonl";
    normlab::fuzz::write_file(path, "");
    const size_t cap = 16 + (control_size ? size_t{control[0]} * 16 : 4095);
    normlab::LineTailer tailer(path.string(), cap);
    std::vector<std::string> lines;
    int64_t long_lines = 0;
    size_t at = 0;
    for (size_t i = 0; at < content.size(); ++i) {
        const uint8_t c = control_size ? control[i % control_size] : 0;
        const size_t chunk =
            control_size ? std::min<size_t>(1 + c % 64, content.size() - at) : content.size();
        normlab::fuzz::append_file(path, content.substr(at, chunk));
        at += chunk;
        drain(tailer, 1 + c / 8, lines, long_lines);  // reads of 1 to 32 bytes
    }
    drain(tailer, size_t{16} << 20, lines, long_lines);

    int64_t expected_long = 0;
    FUZZ_CHECK(lines == complete_lines(content, cap, expected_long),
               "the tailer's lines differ from the file's complete lines");
    FUZZ_CHECK(long_lines == expected_long, "the tailer skipped another number of over-long lines");
    FUZZ_CHECK(tailer.offset() == content.size(), "the tailer's offset is not the file's size");
    const size_t last_newline = content.rfind('\n');
    const bool partial =
        last_newline == std::string_view::npos ? !content.empty() : last_newline + 1 < content.size();
    FUZZ_CHECK(tailer.hasPartialLine() == partial, "the tailer's partial line disagrees with the file");
    return 0;
}
