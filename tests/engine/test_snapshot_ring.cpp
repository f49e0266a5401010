// The fork points of a live run (engine/io/snapshot_ring.h): the newest K kept within the byte budget,
// the nearest point at or before a step, a step taken again replacing what followed it, and a trainer
// restored from a point's bytes stepping bit for bit as the run did from that step (same batches).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "engine/core/atomic_file.h"
#include "engine/io/checkpoint.h"
#include "engine/io/snapshot_ring.h"
#include "engine/train/trainer.h"
#include "tests/engine/model_test_support.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {

std::string file_bytes(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

TEST(SnapshotRing, KeepsTheNewestWithinCountAndBytes) {
    SnapshotRing ring({10, 3, 1000});
    for (int64_t step = 10; step <= 60; step += 10) ring.keep(step, std::string(100, 'x'));
    EXPECT_EQ(ring.steps(), (std::vector<int64_t>{40, 50, 60}));
    EXPECT_EQ(ring.bytes(), 300u);
    EXPECT_FALSE(ring.at_or_before(39).has_value());
    EXPECT_EQ(ring.at_or_before(59)->step, 50);
    EXPECT_EQ(ring.at_or_before(1000)->step, 60);
    ring.set_settings({10, 3, 250});  // the byte budget now holds two
    EXPECT_EQ(ring.steps(), (std::vector<int64_t>{50, 60}));
    ring.keep(50, std::string(120, 'y'));  // step 50 taken again: it and what followed are replaced
    EXPECT_EQ(ring.steps(), (std::vector<int64_t>{50}));
    EXPECT_EQ(*ring.at_or_before(55)->bytes, std::string(120, 'y'));
    EXPECT_EQ(ring.bytes(), 120u);
}

TEST(SnapshotRing, ForkPointRestoresTheRunBitForBit) {
    Config config = testing::small_model_config(16, 2, 8, 4, 30);
    config.threads = 1;
    Trainer trainer(config);
    SnapshotRing ring({10, 5, size_t{64} << 20});
    std::vector<double> losses;  // by step - 1
    for (int i = 0; i < 30; ++i) {
        losses.push_back(trainer.step().record.loss);
        ring.after_step(trainer);
    }
    EXPECT_EQ(ring.steps(), (std::vector<int64_t>{10, 20, 30}));
    const auto point = ring.at_or_before(25);
    ASSERT_TRUE(point.has_value());
    ASSERT_EQ(point->step, 20);
    const testing::TestFolder folder;
    const std::string path = folder / "fork_point.safetensors";
    write_file_atomically(path, *point->bytes);
    auto fork = load_checkpoint(path, {});
    EXPECT_EQ(fork->steps_done(), 20);
    for (int step = 21; step <= 30; ++step) EXPECT_EQ(fork->step().record.loss, losses[step - 1]) << step;
}

// A full ring lends the point it drops to the next copy: each kept point must still be exactly what
// save_checkpoint writes at that step, whatever storage (larger, smaller, another model's) it reuses.
TEST(SnapshotRing, AFullRingsReusedStorageHoldsExactlyTheCheckpoint) {
    Config config = testing::small_model_config(16, 2, 8, 4, 30);
    config.threads = 1;
    Trainer trainer(config);
    const testing::TestFolder folder;
    const std::string path = folder / "fork_point_reuse.safetensors";
    SnapshotRing ring({5, 2, size_t{64} << 20});
    for (int step = 1; step <= 20; ++step) {
        trainer.step();
        ring.after_step(trainer);
        if (step % 5 != 0) continue;
        save_checkpoint(trainer, path);
        EXPECT_EQ(*ring.at_or_before(step)->bytes, file_bytes(path)) << step;
    }
    EXPECT_EQ(ring.steps(), (std::vector<int64_t>{15, 20}));
    const std::string expected = checkpoint_bytes(trainer);
    EXPECT_EQ(checkpoint_bytes(trainer, std::string(expected.size() * 3, 'z')), expected);
    EXPECT_EQ(checkpoint_bytes(trainer, std::string(7, 'z')), expected);
}

}  // namespace
}  // namespace normlab
