// The RTL core (firmware/rtl/loopback_top in Verilator) against the C++ core: its RX frames
// are byte for byte the frames PatternFramer builds, its checker counts what a stream with
// known faults holds, and its own FIFO overflow is a flagged seq gap.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "hilrig/core/config.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/rtl/rtl_core.hpp"

namespace hilrig {
namespace {

StreamConfig image_stream(const RtlImage& im) {
  StreamConfig cfg;
  cfg.channels = im.channels;
  cfg.sample_format = im.sample_format;
  cfg.frame_bytes = std::uint32_t(kFrameHeaderBytes) + im.samples_per_frame * bytes_per_sample(im.sample_format) * im.channels;
  return cfg;
}

// Clocks until a frame completes (at most `limit` clocks); the frame's bytes, empty if none.
std::vector<std::uint8_t> next_frame(RtlCore& core, std::uint64_t limit = 100000) {
  std::uint32_t len = 0;
  for (std::uint64_t done = 0; done < limit && !core.rx_frame(&len); done += core.run(1000)) {
  }
  const std::uint8_t* p = core.rx_frame(&len);
  if (!p) return {};
  std::vector<std::uint8_t> f(p, p + len);
  core.take_rx_frame();
  return f;
}

TEST(RtlCore, RxFramesAreTheCppCoresFrames) {
  auto core = make_loopback_rtl();
  ASSERT_TRUE(core);
  const StreamConfig cfg = image_stream(core->image());
  core->reset(3, 1, false);  // one sample every 3 clocks
  std::vector<std::uint8_t> want(cfg.frame_bytes);
  for (std::uint64_t seq = 0; seq < 12; ++seq) {
    const std::vector<std::uint8_t> got = next_frame(*core);
    ASSERT_EQ(got.size(), cfg.frame_bytes) << "seq " << seq;
    ASSERT_EQ(build_pattern_frame(cfg, seq, 0, want.data()), cfg.frame_bytes);
    ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0) << "frame " << seq << " differs";
  }
  // 12 frames of 248 samples at 3 clocks per sample, plus the pipeline.
  EXPECT_GE(core->cycles(), 12u * 248 * 3);
  EXPECT_LT(core->cycles(), 13u * 248 * 3);
}

TEST(RtlCore, EobEndsTheBurst) {
  auto core = make_loopback_rtl();
  ASSERT_TRUE(core);
  core->reset(1, 1, false);
  ASSERT_FALSE(next_frame(*core).empty());
  core->set_rx_stop(true);
  std::vector<std::uint8_t> f = next_frame(*core);
  ASSERT_FALSE(f.empty());
  EXPECT_TRUE(f[3] & kFlagEOB);
  EXPECT_TRUE(next_frame(*core, 5000).empty()) << "nothing after the EOB frame";
  EXPECT_TRUE(core->counters().rx_stopped);
}

TEST(RtlCore, FullLinkOverflowsIntoAFlaggedGap) {
  auto core = make_loopback_rtl();
  ASSERT_TRUE(core);
  core->reset(1, 1, false);
  std::uint32_t len = 0;
  while (!core->rx_frame(&len)) core->run(1000);  // frame 0 complete; not taken: rx_axis_tready low
  core->run(20 * 248);                              // the FIFO (4 frames) fills and drops
  ASSERT_GT(core->counters().rx_frames_dropped, 0u);
  core->take_rx_frame();
  std::uint64_t expect_seq = 1, gaps = 0;
  bool flagged = false;
  for (int i = 0; i < 12; ++i) {
    std::vector<std::uint8_t> f = next_frame(*core);
    ASSERT_FALSE(f.empty());
    const FrameHeader h = read_header(f.data());
    if (h.seq != expect_seq) {  // the gap: exactly the dropped frames, on a flagged frame
      gaps += h.seq - expect_seq;
      EXPECT_TRUE(h.flags & kFlagOverflowBefore);
      flagged = true;
    } else {
      EXPECT_FALSE(h.flags & kFlagOverflowBefore);
    }
    EXPECT_EQ(h.sample_tick, h.seq * 248);
    expect_seq = h.seq + 1;
  }
  EXPECT_TRUE(flagged);
  EXPECT_EQ(gaps, core->counters().rx_frames_dropped);  // the gap is exactly the frames dropped
}

TEST(RtlCore, TxCheckerCountsAKnownStream) {
  auto core = make_loopback_rtl();
  ASSERT_TRUE(core);
  const StreamConfig cfg = image_stream(core->image());
  core->reset(1, 1, true);
  std::vector<std::uint8_t> f(cfg.frame_bytes);
  for (std::uint64_t seq = 0; seq < 10; ++seq) {
    if (seq == 5) continue;  // missing
    build_pattern_frame(cfg, seq, seq == 9 ? kFlagEOB : 0, f.data());
    if (seq == 7) f[kFrameHeaderBytes + 8] ^= 0x40;  // one corrupt sample
    core->push_tx_frame(f.data(), cfg.frame_bytes);
  }
  build_pattern_frame(cfg, 3, 0, f.data());  // a late frame (a duplicate, the checker cannot tell)
  core->push_tx_frame(f.data(), cfg.frame_bytes);
  for (int i = 0; i < 100 && core->tx_queued_frames(); ++i) {
    core->run(1000);
    std::uint32_t len;
    if (core->rx_frame(&len)) core->take_rx_frame();
  }
  const RtlCounters c = core->counters();
  EXPECT_EQ(core->tx_queued_frames(), 0u);
  EXPECT_EQ(c.tx_frames_ok, 10u);
  EXPECT_EQ(c.tx_missing_frames, 1u);
  EXPECT_EQ(c.tx_seq_errors, 1u);
  EXPECT_EQ(c.tx_late_frames, 1u);
  EXPECT_EQ(c.tx_pattern_errors, 1u);
  EXPECT_EQ(c.tx_malformed_frames, 0u);
  EXPECT_EQ(c.tx_samples_ok, 10u * 248);
  EXPECT_TRUE(c.tx_eob_seen);
}

}  // namespace
}  // namespace hilrig
