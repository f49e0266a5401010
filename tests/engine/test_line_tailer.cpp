// LineTailer against files written as a live run writes them: an incomplete last line waits for its
// newline, only new bytes are read, a file truncated or replaced by a rename is read again from the
// start and flagged, a missing file is reported without losing state, thousands of small appends in
// random chunks arrive as exactly the lines written, a large backlog comes in bounded polls, a line
// over the cap is skipped and counted without being held, and a FIFO reads as missing without blocking.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/io/line_tailer.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {
namespace fs = std::filesystem;

class LineTailerTest : public testing::TempFolderTest {
  protected:
    void SetUp() override {
        TempFolderTest::SetUp();
        path = (dir / "metrics.jsonl").string();
    }
    void append(const std::string& text) {
        std::ofstream out(path, std::ios::binary | std::ios::app);
        out << text;
    }
    void rewrite(const std::string& text) {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << text;
    }
    std::string path;
};

TEST_F(LineTailerTest, PartialLinesWaitForTheirNewline) {
    LineTailer tailer(path);
    append("{\"step\": 1}\n{\"st");
    LineTailer::Poll first = tailer.poll();
    ASSERT_EQ(first.lines, std::vector<std::string>{"{\"step\": 1}"});
    EXPECT_TRUE(tailer.hasPartialLine());
    EXPECT_TRUE(tailer.poll().lines.empty());  // nothing new
    append("ep\": 2}\r\n");
    EXPECT_EQ(tailer.poll().lines, std::vector<std::string>{"{\"step\": 2}"});
    EXPECT_FALSE(tailer.hasPartialLine());
    EXPECT_EQ(tailer.offset(), fs::file_size(path));
}

TEST_F(LineTailerTest, TruncationAndReplacementRestartFromTheBeginning) {
    LineTailer tailer(path);
    append("a\nb\nc\n");
    EXPECT_EQ(tailer.poll().lines.size(), 3u);
    rewrite("x\n");  // shorter: a new run in the same folder
    LineTailer::Poll truncated = tailer.poll();
    EXPECT_TRUE(truncated.restarted);
    EXPECT_EQ(truncated.lines, std::vector<std::string>{"x"});
    // Replaced by an atomic rename with a longer file: another inode.
    const std::string temporary = (dir / "metrics.tmp").string();
    {
        std::ofstream out(temporary, std::ios::binary);
        out << "p\nq\nr\ns\n";
    }
    fs::rename(temporary, path);
    LineTailer::Poll replaced = tailer.poll();
    EXPECT_TRUE(replaced.restarted);
    EXPECT_EQ(replaced.lines, (std::vector<std::string>{"p", "q", "r", "s"}));
    EXPECT_FALSE(tailer.poll().restarted);
}

TEST_F(LineTailerTest, AMissingFileIsReportedAndLaterRead) {
    LineTailer tailer(path);
    EXPECT_TRUE(tailer.poll().missing);
    append("1\n");
    LineTailer::Poll found = tailer.poll();
    EXPECT_FALSE(found.missing);
    EXPECT_EQ(found.lines, std::vector<std::string>{"1"});
    fs::remove(path);
    EXPECT_TRUE(tailer.poll().missing);
    EXPECT_EQ(tailer.offset(), 2u);  // state kept while it is gone
}

TEST_F(LineTailerTest, ManySmallAppendsArriveExactlyOnceInOrder) {
    LineTailer tailer(path);
    std::string written;
    for (int i = 0; i < 3000; ++i) written += "{\"step\": " + std::to_string(i) + ", \"loss\": 2.5}\n";
    std::mt19937 random(7);
    std::vector<std::string> read;
    for (size_t at = 0; at < written.size();) {
        const size_t chunk = std::min<size_t>(1 + random() % 97, written.size() - at);
        append(written.substr(at, chunk));
        at += chunk;
        if (random() % 3 == 0)
            for (std::string& line : tailer.poll().lines) read.push_back(std::move(line));
    }
    for (std::string& line : tailer.poll().lines) read.push_back(std::move(line));
    ASSERT_EQ(read.size(), 3000u);
    for (int i = 0; i < 3000; ++i) ASSERT_EQ(read[i], "{\"step\": " + std::to_string(i) + ", \"loss\": 2.5}");
}

TEST_F(LineTailerTest, ABacklogComesInBoundedPolls) {
    std::string written;
    for (int i = 0; i < 1000; ++i) written += std::string(99, 'x') + "\n";  // 100 KB
    append(written);
    LineTailer tailer(path);
    size_t lines = 0;
    int polls = 0;
    for (LineTailer::Poll poll = tailer.poll(4096);; poll = tailer.poll(4096)) {
        ++polls;
        lines += poll.lines.size();
        if (!poll.more) break;
    }
    EXPECT_EQ(lines, 1000u);
    EXPECT_GE(polls, 25);  // 100 KB / 4 KB
}

TEST_F(LineTailerTest, AnOverLongLineIsSkippedAndCountedWithoutBeingHeld) {
    LineTailer tailer(path);
    append("a\n");
    EXPECT_EQ(tailer.poll().lines, std::vector<std::string>{"a"});
    int64_t long_lines = 0;
    for (int i = 0; i < 48; ++i) {  // 3 MB without a newline, polled as a live writer appends it
        append(std::string(64 << 10, 'x'));
        const LineTailer::Poll poll = tailer.poll();
        EXPECT_TRUE(poll.lines.empty());
        long_lines += poll.longLines;
        ASSERT_LE(tailer.partialBytes(), kMaxLineBytes);
    }
    EXPECT_TRUE(tailer.hasPartialLine());
    append("x\nb\n" + std::string(kMaxLineBytes + 1, 'y') + "\nc\n");
    const LineTailer::Poll poll = tailer.poll();
    EXPECT_EQ(poll.lines, (std::vector<std::string>{"b", "c"}));
    EXPECT_EQ(long_lines + poll.longLines, 2);
    EXPECT_EQ(tailer.offset(), fs::file_size(path));
}

TEST_F(LineTailerTest, AFifoOrADeviceReadsAsMissingWithoutBlocking) {
    ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
    ::alarm(30);  // a tailer that blocks on the FIFO ends the test run instead of hanging it
    EXPECT_TRUE(LineTailer(path).poll().missing);
    const fs::path zero = dir / "zero.jsonl";
    fs::create_symlink("/dev/zero", zero);
    EXPECT_TRUE(LineTailer(zero.string()).poll().missing);
    ::alarm(0);
}

}  // namespace
}  // namespace normlab
