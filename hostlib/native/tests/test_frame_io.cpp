// The frame-I/O layer: frames built into a FrameSink come out of a FrameSource whole,
// in order and once, over UDP (plain and GSO/GRO batches) and the shm ring; what
// cannot be a frame is flagged malformed; a full ring is no room, not a wait forever.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <vector>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/config.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/core/rx_check.hpp"
#include "hilrig/io/frame_sink.hpp"
#include "hilrig/io/frame_source.hpp"

namespace {

// A test's entry point resolves its config, as the loader does a case's.
hilrig::StreamConfig stream(hilrig::TransportKind kind, std::uint32_t frame_bytes) {
  hilrig::StreamConfig c = hilrig::default_stream_config(kind, frame_bytes);
  c.transport.host = "127.0.0.1";
  c.transport.port = 0;
  c.transport.slots = 64;
  return hilrig::resolve_stream_config(c, "test");
}

// The sink's config: the source's endpoint as its destination.
hilrig::StreamConfig towards(const hilrig::StreamConfig& c, const hilrig::FrameSource& src) {
  hilrig::StreamConfig to = c;
  to.transport = hilrig::transport_at_endpoint(c.transport, src.endpoint(), "test");
  return to;
}

// Sends frames [first, first + n) as one batch; returns frames sent.
unsigned send(hilrig::FrameSink& sink, const hilrig::StreamConfig& c, std::uint64_t first, unsigned n) {
  const hilrig::PatternFramer framer(c);
  for (unsigned i = 0; i < n; ++i) {
    std::uint8_t* out = sink.acquire(100'000'000);
    if (!out) break;
    sink.commit(framer.build(first + i, 0, out));
  }
  return sink.flush(hilrig::now_ns() + 1'000'000'000);
}

// Receives up to n frames (one at a time, as readStream does) through the checker.
std::vector<std::uint64_t> receive(hilrig::FrameSource& src, hilrig::RxChecker& check, unsigned n) {
  std::vector<std::uint64_t> seqs;
  hilrig::FrameHeader h;
  while (seqs.size() < n) {
    const hilrig::FrameView f = src.next(1'000'000'000);
    if (!f) break;
    EXPECT_FALSE(f.malformed);
    if (check.on_frame(f.data, f.len, hilrig::now_ns(), &h)) seqs.push_back(h.seq);
    src.release();
  }
  check.flush();
  return seqs;
}

class FrameIo : public ::testing::TestWithParam<std::tuple<std::string, std::uint32_t>> {};

TEST_P(FrameIo, SinkToSourceWholeInOrderOnce) {
  const auto [kind, frame_bytes] = GetParam();
  const hilrig::StreamConfig c = stream(hilrig::parse_transport_kind(kind, "kind"), frame_bytes);
  hilrig::FrameSource src(c);
  hilrig::FrameSink sink(towards(c, src));
  hilrig::RxCounters counters;
  hilrig::RxChecker check(counters);
  std::vector<std::uint64_t> got;
  for (std::uint64_t seq = 0; seq < 200; seq += 40) {  // batches the ring (64 slots) holds
    ASSERT_EQ(send(sink, c, seq, 40), 40u);
    const auto part = receive(src, check, 40);
    got.insert(got.end(), part.begin(), part.end());
  }
  ASSERT_EQ(got.size(), 200u);
  for (std::uint64_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], i);
  EXPECT_EQ(counters.pattern_errors.load(), 0u);
  EXPECT_EQ(counters.seq_errors.load(), 0u);
  EXPECT_EQ(counters.malformed_frames.load(), 0u);
  EXPECT_EQ(counters.frames_received.load(), 200u);
}

// 256 bytes: UDP GSO/GRO batches where the kernel offers them; 4048: one per datagram.
INSTANTIATE_TEST_SUITE_P(Transports, FrameIo,
                         ::testing::Combine(::testing::Values("udp", "tcp", "shm"), ::testing::Values(256u, 4048u)));

TEST(FrameSource, OversizedDatagramIsMalformedAndTheNextFrameStillComes) {
  const hilrig::StreamConfig c = stream(hilrig::TransportKind::udp, 256);
  hilrig::FrameSource src(c);
  hilrig::UdpSocket raw = hilrig::UdpSocket::connect_to("127.0.0.1", src.port(), 0);
  std::vector<std::uint8_t> big(1000, 0xab);
  ASSERT_EQ(::send(raw.fd(), big.data(), big.size(), 0), ssize_t(big.size()));
  hilrig::FrameSink sink(towards(c, src));
  ASSERT_EQ(send(sink, c, 0, 1), 1u);
  const hilrig::FrameView bad = src.next(1'000'000'000);
  ASSERT_TRUE(bad);
  EXPECT_TRUE(bad.malformed);
  src.release();
  const hilrig::FrameView good = src.next(1'000'000'000);
  ASSERT_TRUE(good);
  EXPECT_FALSE(good.malformed);
  EXPECT_EQ(hilrig::frame_seq(good.data), 0u);
  src.release();
}

TEST(FrameSource, NothingSentIsATimeoutNotAFrame) {
  for (auto kind : {hilrig::TransportKind::udp, hilrig::TransportKind::shm}) {
    hilrig::FrameSource src(stream(kind, 256));
    const std::uint64_t t0 = hilrig::now_ns();
    EXPECT_FALSE(src.next(20'000'000));
    EXPECT_GE(hilrig::now_ns() - t0, 15'000'000u);
  }
}

TEST(FrameSink, AFullRingIsNoRoomUntilTheSourceReleases) {
  hilrig::StreamConfig c = stream(hilrig::TransportKind::shm, 256);
  c.transport.slots = 4;  // the opener takes the config's slots as given
  hilrig::FrameSource src(c);
  hilrig::FrameSink sink(towards(c, src));
  ASSERT_EQ(send(sink, c, 0, 4), 4u);
  EXPECT_EQ(sink.acquire(0), nullptr);
  EXPECT_EQ(sink.acquire(5'000'000), nullptr);  // waits, bounded
  ASSERT_TRUE(src.wait(0));
  const hilrig::FrameView f = src.take();
  ASSERT_TRUE(f);
  src.release();
  EXPECT_EQ(sink.acquire(0), nullptr);  // released, not yet given back
  src.release_batch();
  EXPECT_NE(sink.acquire(0), nullptr);
}

TEST(FrameSink, RingSlotsSmallerThanTheFrameAreRefusedByName) {
  hilrig::StreamConfig c = stream(hilrig::TransportKind::shm, 256);
  hilrig::FrameSource src(c);
  hilrig::StreamConfig big = towards(c, src);
  big.frame_bytes = 1024;
  try {
    hilrig::FrameSink sink(big);
    FAIL() << "a 1024-byte frame was accepted for 256-byte slots";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("frame_bytes is 1024"), std::string::npos) << e.what();
  }
}

}  // namespace

// Sizing happens once, when the config is resolved; the opened stream has exactly the
// resolved sizes: the socket buffer and ring a stream opened before, from the request.
TEST(FrameSource, OpensWithTheResolvedSizes) {
  const hilrig::StreamConfig fast_udp = hilrig::resolve_stream_config(
      nlohmann::json{{"rate_sps", 1e9}, {"frame_bytes", 8000}, {"transport", {{"kind", "udp"}, {"port", 0}}}});
  EXPECT_EQ(fast_udp.transport.socket_buffer_bytes, hilrig::defaults::kSocketBufferMaxBytes);  // 50 ms of 4 GB/s, capped
  hilrig::FrameSource udp(fast_udp);
  EXPECT_EQ(udp.endpoint()["socket_buffer_bytes"], hilrig::defaults::kSocketBufferMaxBytes);
  const hilrig::StreamConfig fast_shm = hilrig::resolve_stream_config(
      nlohmann::json{{"rate_sps", 1e9}, {"frame_bytes", 65584}, {"transport", {{"kind", "shm"}}}});
  EXPECT_EQ(fast_shm.transport.slots, 3052u);  // ceil(50 ms of 1e9 / 16384 frames/s)
  hilrig::FrameSource shm(fast_shm);
  EXPECT_EQ(shm.endpoint()["slots"], 3052u);
  // Slots the config gives are its own, at any rate; resolving again keeps them.
  const hilrig::StreamConfig given_shm = hilrig::resolve_stream_config(
      nlohmann::json{{"rate_sps", 1e9}, {"frame_bytes", 65584}, {"transport", {{"kind", "shm"}, {"slots", 64}}}});
  EXPECT_EQ(given_shm.transport.slots, 64u);
  EXPECT_EQ(hilrig::resolve_stream_config(hilrig::to_json(fast_shm)).transport.slots, 3052u);
}
