// Feeds a run folder written by a foreign writer: config.json, summary.json, metrics.jsonl and
// events.jsonl, the input's parts cut at 0x1e (fewer parts: fewer files). Beyond no crash: only
// InputError escapes, polls in small reads yield one record, event or skipped line per complete
// non-empty line, and each event read writes JSON that reads back to the same event.
#include <algorithm>

#include "engine/core/errors.h"
#include "engine/io/records_json.h"
#include "engine/io/run_folder_reader.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

const char* const kFiles[] = {"config.json", "summary.json", "metrics.jsonl", "events.jsonl"};

// The complete (newline-ended) lines of `text` that are not empty once a trailing '\r' is dropped.
int64_t complete_lines(const std::string& text) {
    int64_t count = 0;
    size_t start = 0;
    for (size_t newline = text.find('\n'); newline != std::string::npos; newline = text.find('\n', start)) {
        const size_t length = newline - start;
        count += length > 1 || (length == 1 && text[start] != '\r');
        start = newline + 1;
    }
    return count;
}

void check_event(const normlab::Event& event) {
    const nlohmann::json written = normlab::to_json(event);
    const normlab::Event again = normlab::event_from_json(written);
    FUZZ_CHECK(normlab::to_json(again) == written, "event round trip changed it: " + written.dump());
}

// Reads everything in polls of `max_bytes`, checking that each complete line is accounted for once.
void read_folder(const std::string& folder, const std::vector<std::string>& parts, size_t max_bytes) {
    normlab::RunFolderReader reader(folder);
    normlab::config_to_json_text(reader.config());
    int64_t records = 0, events = 0, skipped = 0;
    // Each poll reads at least a byte while there is more, so a poll per byte (plus one per file)
    // reads everything; a backlog still there after that means a poll read nothing.
    size_t bytes = 0;
    for (const std::string& part : parts) bytes += part.size();
    bool more = true;
    for (size_t poll = 0; more && poll <= bytes + parts.size() + 1; ++poll) {
        const normlab::RunFolderReader::Update update = reader.poll(max_bytes);
        FUZZ_CHECK(!update.restarted, "a folder nobody writes to restarted");
        records += static_cast<int64_t>(update.records.size());
        events += static_cast<int64_t>(update.events.size());
        skipped += update.skippedLines;
        for (const normlab::Event& event : update.events) check_event(event);
        more = update.more;
    }
    FUZZ_CHECK(!more, "polls kept saying there was more after every byte was read");
    const int64_t lines =
        (parts.size() > 2 ? complete_lines(parts[2]) : 0) + (parts.size() > 3 ? complete_lines(parts[3]) : 0);
    FUZZ_CHECK(records + events + skipped == lines, "lines read != complete lines written");
    FUZZ_CHECK(reader.skippedLines() == skipped, "skippedLines() != the polls' skipped lines");
    reader.summary();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<std::string> parts = normlab::fuzz::split_parts(normlab::fuzz::as_text(data, size), 4);
    const std::filesystem::path root = normlab::fuzz::fresh_dir("run_folder");
    const std::filesystem::path folder = root / "run";
    std::filesystem::create_directories(folder);
    for (size_t i = 0; i < parts.size(); ++i) normlab::fuzz::write_file(folder / kFiles[i], parts[i]);
    // The poll size from the input's length: from a few bytes (every line cut) to all at once, but
    // no more than about 16k polls (a megabyte polled a byte at a time outlasts the fuzzer's timeout).
    const size_t max_bytes = size % 7 == 0 ? size_t{16} << 20 : std::max(1 + size % 61, 1 + size / 16384);
    try {
        read_folder(folder.string(), parts, max_bytes);
        FUZZ_CHECK(normlab::find_run_folders(root.string()) == std::vector<std::string>{folder.string()},
                   "find_run_folders missed the run folder");
    } catch (const normlab::InputError& error) {
        FUZZ_CHECK(false, std::string("a folder with config.json was refused: ") + error.what());
    }
    return 0;
}
