// RxChecker: every counter from hand-built frame sequences (the accounting of
// docs/architecture.md "Sequence accounting").
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/core/rx_check.hpp"

namespace {
using hilrig::RxChecker;
using hilrig::RxCounters;

struct Rig {
  hilrig::StreamConfig cfg = [] {
    hilrig::StreamConfig c;
    c.frame_bytes = 48 + 4 * 100;  // 100 sc16 samples, 1 channel
    return c;
  }();
  RxCounters c;
  RxChecker check{c};
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(cfg.frame_bytes);
  std::uint64_t now = 1'000'000;
  std::uint32_t frame(std::uint64_t seq, std::uint8_t flags = 0) {
    const std::uint32_t len = hilrig::build_pattern_frame(cfg, seq, flags, buf.data());
    hilrig::finish_frame(buf.data(), false, now - 1000);
    return len;
  }
  bool feed(std::uint64_t seq, std::uint8_t flags = 0) {
    const std::uint32_t len = frame(seq, flags);
    hilrig::FrameHeader h;
    now += 10'000;
    return check.on_frame(buf.data(), len, now, &h);
  }
  std::uint64_t get(const hilrig::Counter& x) {
    check.flush();
    return x.load();
  }
};
}  // namespace

TEST(RxCheck, InOrderFramesCountFramesSamplesAndBytes) {
  Rig r;
  for (std::uint64_t s = 0; s < 200; ++s) ASSERT_TRUE(r.feed(s));
  EXPECT_EQ(r.get(r.c.frames_received), 200u);
  EXPECT_EQ(r.get(r.c.samples_received), 200u * 100);
  EXPECT_EQ(r.get(r.c.payload_bytes_received), 200u * 400);
  EXPECT_EQ(r.get(r.c.seq_errors) + r.get(r.c.missing_frames) + r.get(r.c.pattern_errors), 0u);
  EXPECT_EQ(r.c.latency.count(), 200u);
  EXPECT_EQ(r.get(r.c.longest_gap_ns), 10'000u);
}

TEST(RxCheck, AGapIsOneSeqErrorItsFramesAndSamplesMissing) {
  Rig r;
  for (std::uint64_t s : {0, 1, 2, 6, 7}) r.feed(s);
  EXPECT_EQ(r.get(r.c.seq_errors), 1u);
  EXPECT_EQ(r.get(r.c.missing_frames), 3u);
  EXPECT_EQ(r.get(r.c.dropped_samples), 300u);
  EXPECT_EQ(r.get(r.c.samples_received), 500u);
}

TEST(RxCheck, ADuplicateIsCountedOnceAndItsSamplesNotTwice) {
  Rig r;
  for (std::uint64_t s : {0, 1, 2, 2, 3}) r.feed(s);
  EXPECT_EQ(r.get(r.c.duplicate_frames), 1u);
  EXPECT_EQ(r.get(r.c.samples_received), 400u);
  EXPECT_EQ(r.get(r.c.frames_received), 5u);
  EXPECT_EQ(r.get(r.c.missing_frames) + r.get(r.c.reordered_frames), 0u);
}

TEST(RxCheck, ASwapIsReorderedNotMissing) {
  Rig r;
  for (std::uint64_t s : {0, 1, 3, 2, 4}) r.feed(s);
  EXPECT_EQ(r.get(r.c.reordered_frames), 1u);
  EXPECT_EQ(r.get(r.c.missing_frames), 0u);
  EXPECT_EQ(r.get(r.c.dropped_samples), 0u);
  EXPECT_EQ(r.get(r.c.seq_errors), 1u);  // the jump was seen when it happened
  EXPECT_EQ(r.get(r.c.samples_received), 500u);
}

TEST(RxCheck, CorruptedWordsArePatternErrorsMalformedFramesAreNotParsed) {
  Rig r;
  const std::uint32_t len = r.frame(0);
  r.buf[48 + 4 * 7] ^= 0x10;
  r.buf[48 + 4 * 9 + 3] ^= 0x80;
  hilrig::FrameHeader h;
  ASSERT_TRUE(r.check.on_frame(r.buf.data(), len, r.now, &h));
  EXPECT_EQ(r.get(r.c.pattern_errors), 2u);
  r.frame(1);
  r.buf[0] ^= 0xFF;  // bad magic
  EXPECT_FALSE(r.check.on_frame(r.buf.data(), len, r.now, &h));
  EXPECT_FALSE(r.check.on_frame(r.buf.data(), 20, r.now, &h));  // shorter than a header
  r.check.on_malformed();
  EXPECT_EQ(r.get(r.c.malformed_frames), 3u);
  EXPECT_EQ(r.get(r.c.frames_received), 1u);
}

TEST(RxCheck, OverflowFlagIsAnOverrunEobIsSeenWithItsCounts) {
  Rig r;
  r.feed(0);
  r.feed(1, hilrig::kFlagOverflowBefore);
  EXPECT_FALSE(r.c.eob_received.load());
  r.feed(2, hilrig::kFlagEOB);
  EXPECT_TRUE(r.c.eob_received.load());
  EXPECT_EQ(r.c.frames_received.load(), 3u);  // flushed by EOB, no flush() needed
  EXPECT_EQ(r.get(r.c.overruns), 1u);
}

TEST(RxCheck, IdleCountsTimeoutsOnlyMidStream) {
  Rig r;
  r.check.on_idle(1, 100);
  r.check.on_idle(1000, 100);
  EXPECT_EQ(r.c.timeouts.load(), 0u);  // before the first frame: not a timeout
  r.feed(0);
  r.check.on_batch_done(r.now);
  r.check.on_idle(r.now + 50, 100);
  r.check.on_idle(r.now + 150, 100);
  r.check.on_idle(r.now + 300, 100);
  EXPECT_EQ(r.c.timeouts.load(), 2u);
  r.feed(1, hilrig::kFlagEOB);
  r.check.on_batch_done(r.now);
  r.check.on_idle(r.now + 1000, 100);
  EXPECT_EQ(r.c.timeouts.load(), 2u);  // after EOB: not a timeout
}

TEST(RxCheck, CountersJsonHasEveryDocumentedKey) {
  Rig r;
  r.feed(0);
  const std::uint64_t before = hilrig::now_ns();
  const auto j = hilrig::counters_json(r.c);
  const std::uint64_t after = hilrig::now_ns();
  for (const char* k : {"frames_received", "samples_received", "payload_bytes_received", "seq_errors", "missing_frames",
                        "dropped_samples", "duplicate_frames", "reordered_frames", "malformed_frames", "overruns",
                        "pattern_errors", "timeouts", "first_frame_ns", "last_frame_ns", "longest_gap_ns",
                        "latency_p50_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns", "latency_count",
                        "eob_received", "block_frames", "blocks", "read_ns"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j.size(), 24u);
  // read_ns: when the counters were read, on last_frame_ns's clock (the engine's window edge)
  EXPECT_GE(j["read_ns"].get<std::uint64_t>(), before);
  EXPECT_LE(j["read_ns"].get<std::uint64_t>(), after);
}

// The lab's table: received / sent per block of 100 000 sequence numbers, each frame
// once (a duplicate does not count twice, a late frame counts in its own block).
TEST(RxCheck, BlocksCountReceivedAndSentPer100kSeq) {
  Rig r;
  const std::uint64_t n = RxCounters::kBlockFrames;
  for (std::uint64_t s = 0; s < n + n / 2; ++s) {
    if (s < n && s % 1000 == 7) continue;            // block 0: 100 lost
    if (s >= n && s % 10 == 3) continue;             // block 1: every 10th lost
    r.feed(s);
    if (s == n + 20) r.feed(n + 20);                 // a duplicate
  }
  r.feed(n + 13);                                    // a late frame of block 1
  r.feed(7);                                         // very late, still received: block 0
  r.check.flush();
  const auto b = hilrig::block_counts(r.c);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].second, n);
  EXPECT_EQ(b[1].second, n / 2);                     // sent so far: up to the highest seq seen
  EXPECT_EQ(b[1].first, n / 2 - n / 20 + 1);
  const auto j = hilrig::counters_json(r.c);
  EXPECT_EQ(j["block_frames"], n);
  EXPECT_EQ(j["blocks"][1][0], b[1].first);
  EXPECT_EQ(b[0].first, n - 100 + 1);
  EXPECT_EQ(j["blocks"][0][0], b[0].first);
}
