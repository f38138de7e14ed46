// A FrameSource fed by transfers (the USB engine's IN direction) over a scripted feed:
// a transfer is a batch of the frames packed in it; a transfer cut inside a frame is
// one short transfer and one malformed frame; a frame longer than the stream's, or one
// the checker refuses, loses the rest of its transfer; the transfer goes back to the
// feed when its batch is released.
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "hilrig/core/config.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/core/rx_check.hpp"
#include "hilrig/io/frame_source.hpp"
#include "hilrig/io/streams.hpp"

namespace {
using namespace hilrig;

constexpr std::uint32_t kFrameBytes = 256;

StreamConfig stream() {
  StreamConfig c;
  c.frame_bytes = kFrameBytes;
  return c;
}

// Frames [first, first + n) back to back, as a packed IN transfer carries them.
std::vector<std::uint8_t> frames(std::uint64_t first, unsigned n) {
  const PatternFramer framer(stream());
  std::vector<std::uint8_t> t(std::size_t(n) * framer.frame_len());
  for (unsigned i = 0; i < n; ++i) framer.build(first + i, 0, t.data() + std::size_t(i) * framer.frame_len());
  return t;
}

class ScriptedFeed final : public TransferFeed {
 public:
  std::deque<std::vector<std::uint8_t>> transfers;
  unsigned released = 0, short_transfers = 0;
  bool next_transfer(std::uint64_t, Transfer* out) override {
    if (transfers.empty()) return false;
    current_ = std::move(transfers.front());
    transfers.pop_front();
    *out = {current_.data(), std::uint32_t(current_.size())};
    return true;
  }
  void release_transfer() override { ++released; }
  void on_short_transfer() override { ++short_transfers; }

 private:
  std::vector<std::uint8_t> current_;
};

// The views of the next batch: their lengths, 0 for a malformed one.
std::vector<std::uint32_t> batch(FrameSource& src) {
  std::vector<std::uint32_t> lens;
  if (!src.wait(0)) return lens;
  while (const FrameView f = src.take()) {
    lens.push_back(f.malformed ? 0 : f.len);
    src.release();
  }
  return lens;
}

TEST(UsbFrameSource, ATransferIsABatchReleasedAsAWhole) {
  ScriptedFeed feed;
  feed.transfers = {frames(0, 3), {}, frames(3, 1)};
  FrameSource src(feed, kFrameBytes);
  EXPECT_EQ(src.kind(), TransportKind::usb);
  EXPECT_EQ(batch(src), std::vector<std::uint32_t>(3, kFrameBytes));
  EXPECT_EQ(feed.released, 0u);  // held until its batch is released
  EXPECT_TRUE(batch(src).empty()) << "an empty transfer is a batch with no frames";
  EXPECT_EQ(feed.released, 1u);
  src.release_batch();
  EXPECT_EQ(feed.released, 2u);
  EXPECT_EQ(batch(src), std::vector<std::uint32_t>(1, kFrameBytes));
  src.release_batch();
  src.release_batch();  // nothing held: nothing more goes back
  EXPECT_EQ(feed.released, 3u);
  EXPECT_FALSE(src.wait(0));
  EXPECT_EQ(feed.short_transfers, 0u);
}

TEST(UsbFrameSource, ATransferCutInsideAFrameIsOneShortTransfer) {
  ScriptedFeed feed;
  std::vector<std::uint8_t> cut = frames(0, 3);
  cut.resize(2 * kFrameBytes + 100);  // the device ended it inside the third frame
  std::vector<std::uint8_t> headless = frames(3, 2);
  headless.resize(kFrameBytes + 20);  // not even the next header
  feed.transfers = {cut, headless};
  FrameSource src(feed, kFrameBytes);
  EXPECT_EQ(batch(src), (std::vector<std::uint32_t>{kFrameBytes, kFrameBytes, 0}));
  EXPECT_EQ(feed.short_transfers, 1u);
  EXPECT_EQ(batch(src), (std::vector<std::uint32_t>{kFrameBytes, 0}));
  EXPECT_EQ(feed.short_transfers, 2u);
}

TEST(UsbFrameSource, AFrameLongerThanTheStreamsLosesTheRestOfItsTransfer) {
  ScriptedFeed feed;
  feed.transfers = {frames(0, 4)};
  FrameSource src(feed, kFrameBytes - 4);  // every frame is 4 bytes too long for this stream
  EXPECT_EQ(batch(src), std::vector<std::uint32_t>{0});
  EXPECT_EQ(feed.short_transfers, 0u);
}

TEST(UsbFrameSource, AFrameTheCheckerRefusesLosesTheRestOfItsTransfer) {
  ScriptedFeed feed;
  std::vector<std::uint8_t> bad = frames(0, 4);
  bad[std::size_t(kFrameBytes)] ^= 0xff;  // the second frame's magic
  feed.transfers = {bad, frames(4, 2)};
  FrameSource src(feed, kFrameBytes);
  RxCounters c;
  RxChecker check(c);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(src.wait(0));
    check_batch(src, check, 1);
    src.release_batch();
  }
  EXPECT_EQ(c.frames_received.load(), 3u);   // 0, then 4 and 5
  EXPECT_EQ(c.malformed_frames.load(), 1u);  // 1; 2 and 3 cannot be found after it
  EXPECT_EQ(c.missing_frames.load(), 3u);    // 1, 2, 3
  EXPECT_EQ(c.seq_errors.load(), 1u);
  EXPECT_EQ(feed.released, 2u);
}

TEST(UsbFrameSource, NextReadsAcrossTransfers) {
  ScriptedFeed feed;
  feed.transfers = {frames(0, 2), frames(2, 1)};
  FrameSource src(feed, kFrameBytes);
  for (std::uint64_t seq = 0; seq < 3; ++seq) {
    const FrameView f = src.next(0);
    ASSERT_TRUE(f);
    EXPECT_EQ(frame_seq(f.data), seq);
    src.release();
  }
  EXPECT_FALSE(src.next(0));
  EXPECT_EQ(feed.released, 2u);  // each went back when the next one was asked for
}

}  // namespace
