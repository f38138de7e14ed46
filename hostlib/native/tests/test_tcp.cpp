// The tcp transport: frames cut from a byte stream by their headers, whatever the
// split of the bytes into reads; EOF is the end of the stream (inside a frame: one
// malformed frame and a warning); the sink's frames arrive whole, in order, once;
// a connect with nobody listening fails by name; TCP_INFO and TCP_CONGESTION read back.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/config.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/core/rx_check.hpp"
#include "hilrig/io/frame_sink.hpp"
#include "hilrig/io/frame_source.hpp"
#include "hilrig/io/tcp.hpp"

namespace tcp_tests {  // named: the unity build shares a TU with test_frame_io.cpp

hilrig::StreamConfig tcp_stream(std::uint32_t frame_bytes) {
  hilrig::StreamConfig c = hilrig::default_stream_config(hilrig::TransportKind::tcp, frame_bytes);
  c.transport.host = "127.0.0.1";
  c.transport.port = 0;
  return hilrig::resolve_stream_config(c, "test");
}

hilrig::StreamConfig towards(const hilrig::StreamConfig& c, const hilrig::FrameSource& src) {
  hilrig::StreamConfig to = c;
  to.transport = hilrig::transport_at_endpoint(c.transport, src.endpoint(), "test");
  return to;
}

// n pattern frames of c back to back, the last one an empty EOB frame (header only).
std::vector<std::uint8_t> stream_bytes(const hilrig::StreamConfig& c, unsigned n, std::vector<std::size_t>* lens) {
  const hilrig::PatternFramer framer(c);
  std::vector<std::uint8_t> out;
  std::vector<std::uint8_t> f(c.frame_bytes);
  for (unsigned i = 0; i + 1 < n; ++i) {
    const std::uint32_t len = framer.build(i, 0, f.data());
    out.insert(out.end(), f.begin(), f.begin() + len);
    lens->push_back(len);
  }
  hilrig::FrameHeader h;
  h.flags = hilrig::kFlagEOB;
  h.seq = n - 1;
  std::vector<std::uint8_t> eob = hilrig::encode_frame(h, nullptr, 0);
  out.insert(out.end(), eob.begin(), eob.end());
  lens->push_back(eob.size());
  return out;
}

// Feeds bytes in pieces at the given cut points; returns the frame lengths taken.
std::vector<std::size_t> reassemble(hilrig::FrameReassembler& r, const std::vector<std::uint8_t>& bytes,
                                    const std::vector<std::size_t>& cuts, unsigned* malformed) {
  std::vector<std::size_t> got;
  std::size_t at = 0;
  auto feed = [&](std::size_t to) {
    while (at < to) {
      std::size_t room = 0;
      std::uint8_t* p = r.space(&room);
      const std::size_t n = std::min(room, to - at);
      std::memcpy(p, bytes.data() + at, n);
      r.filled(n);
      at += n;
      while (r.ready()) {
        const hilrig::FrameView f = r.take();
        if (f.malformed) ++*malformed;
        else got.push_back(f.len);
      }
    }
  };
  for (std::size_t cut : cuts) feed(cut);
  feed(bytes.size());
  return got;
}

TEST(FrameReassembler, AFrameSplitAtEveryByteBoundaryComesOutWhole) {
  const hilrig::StreamConfig c = tcp_stream(256);
  std::vector<std::size_t> lens;
  const std::vector<std::uint8_t> bytes = stream_bytes(c, 3, &lens);  // 256, 256, 48 (EOB)
  for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
    hilrig::FrameReassembler r(c.frame_bytes);
    unsigned malformed = 0;
    EXPECT_EQ(reassemble(r, bytes, {cut}, &malformed), lens) << "cut at byte " << cut;
    EXPECT_EQ(malformed, 0u);
    EXPECT_EQ(r.buffered(), 0u);
  }
}

TEST(FrameReassembler, ArbitrarySplitReadsGiveEveryFrameOnceInOrder) {
  const hilrig::StreamConfig c = tcp_stream(1072);
  std::vector<std::size_t> lens;
  const std::vector<std::uint8_t> bytes = stream_bytes(c, 3000, &lens);  // ~3 MB: the buffer wraps many times
  std::mt19937_64 rng(7);
  for (unsigned trial = 0; trial < 5; ++trial) {
    std::vector<std::size_t> cuts;
    for (std::size_t at = 0; at < bytes.size();) {
      at += 1 + rng() % (trial % 2 ? 97 : 300000);  // tiny reads and reads of many frames
      cuts.push_back(std::min(at, bytes.size()));
    }
    hilrig::FrameReassembler r(c.frame_bytes);
    unsigned malformed = 0;
    const std::vector<std::size_t> got = reassemble(r, bytes, cuts, &malformed);
    EXPECT_EQ(got, lens);
    EXPECT_EQ(malformed, 0u);
  }
}

TEST(FrameReassembler, AHeaderThatCannotStartAFrameLosesTheRestOfTheStream) {
  const hilrig::StreamConfig c = tcp_stream(256);
  std::vector<std::size_t> lens;
  std::vector<std::uint8_t> bytes = stream_bytes(c, 4, &lens);
  std::vector<std::uint8_t> bad_magic = bytes, too_long = bytes;
  bad_magic[256] ^= 0xff;  // the second frame's magic
  const std::uint32_t huge = 1u << 20;
  std::memcpy(too_long.data() + 256 + offsetof(hilrig::FrameHeader, payload_bytes), &huge, 4);
  for (const auto* b : {&bad_magic, &too_long}) {
    hilrig::FrameReassembler r(c.frame_bytes);
    unsigned malformed = 0;
    const std::vector<std::size_t> got = reassemble(r, *b, {}, &malformed);
    EXPECT_EQ(got, std::vector<std::size_t>{256});  // the frame before it
    EXPECT_EQ(malformed, 1u);                        // the rest, once
    EXPECT_TRUE(r.lost());
  }
}

TEST(FrameReassembler, EofInsideAFrameCutsItAsMalformed) {
  const hilrig::StreamConfig c = tcp_stream(256);
  std::vector<std::size_t> lens;
  const std::vector<std::uint8_t> bytes = stream_bytes(c, 3, &lens);
  hilrig::FrameReassembler r(c.frame_bytes);
  unsigned malformed = 0;
  const std::vector<std::uint8_t> part(bytes.begin(), bytes.begin() + 256 + 100);
  EXPECT_EQ(reassemble(r, part, {}, &malformed), std::vector<std::size_t>{256});
  const auto [have, expected] = r.cut();
  EXPECT_EQ(have, 100u);
  EXPECT_EQ(expected, 256u);
  ASSERT_TRUE(r.ready());
  const hilrig::FrameView f = r.take();
  EXPECT_TRUE(f.malformed);
  EXPECT_EQ(f.len, 100u);
  EXPECT_FALSE(r.ready());
}

// Receives until n frames or a timeout, through the checker; counts malformed views.
std::vector<std::uint64_t> receive(hilrig::FrameSource& src, hilrig::RxChecker& check, unsigned n, unsigned* malformed) {
  std::vector<std::uint64_t> seqs;
  hilrig::FrameHeader h;
  while (seqs.size() < n) {
    const hilrig::FrameView f = src.next(2'000'000'000);
    if (!f) break;
    if (f.malformed) {
      check.on_malformed();
      ++*malformed;
    } else if (check.on_frame(f.data, f.len, hilrig::now_ns(), &h)) {
      seqs.push_back(h.seq);
    }
    src.release();
  }
  check.flush();
  return seqs;
}

unsigned send(hilrig::FrameSink& sink, const hilrig::StreamConfig& c, std::uint64_t first, unsigned n) {
  const hilrig::PatternFramer framer(c);
  unsigned sent = 0;
  for (unsigned done = 0; done < n;) {
    unsigned k = 0;
    for (; done + k < n; ++k) {
      std::uint8_t* out = sink.acquire(0);
      if (!out) break;
      sink.commit(framer.build(first + done + k, 0, out));
    }
    sent += sink.flush(hilrig::now_ns() + 2'000'000'000);
    done += k;
  }
  return sent;
}

class TcpWrites : public ::testing::TestWithParam<std::uint32_t> {};

// write_bytes 1000 cuts every 4048-byte frame over several send() calls; 0 sends a batch per call.
TEST_P(TcpWrites, SinkToSourceWholeInOrderOnceAndChecked) {
  hilrig::StreamConfig c = tcp_stream(4048);
  c.crc = true;
  hilrig::FrameSource src(c);
  hilrig::StreamConfig to = towards(c, src);
  to.transport.write_bytes = GetParam();
  hilrig::FrameSink sink(to);
  hilrig::RxCounters counters;
  hilrig::RxChecker check(counters);
  std::vector<std::uint64_t> got;
  unsigned malformed = 0;
  for (std::uint64_t seq = 0; seq < 2000; seq += 500) {
    ASSERT_EQ(send(sink, c, seq, 500), 500u);
    const auto part = receive(src, check, 500, &malformed);
    got.insert(got.end(), part.begin(), part.end());
  }
  ASSERT_EQ(got.size(), 2000u);
  for (std::uint64_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], i);
  EXPECT_EQ(malformed, 0u);
  EXPECT_EQ(counters.pattern_errors.load(), 0u);
  EXPECT_EQ(counters.seq_errors.load(), 0u);
  EXPECT_EQ(counters.malformed_frames.load(), 0u);
  // Both ends see one established connection; the sender has measured a round trip.
  const nlohmann::json tx = sink.tcp_info(), rx = src.tcp_info();
  EXPECT_TRUE(tx["connected"].get<bool>());
  EXPECT_TRUE(rx["connected"].get<bool>());
  EXPECT_GT(tx["rtt_ns"].get<std::uint64_t>(), 0u);
  EXPECT_GT(tx["cwnd_segments"].get<std::uint64_t>(), 0u);
  EXPECT_GT(tx["sndbuf_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_FALSE(tx["congestion"].get<std::string>().empty());
  EXPECT_TRUE(src.warnings().empty());
}
INSTANTIATE_TEST_SUITE_P(WriteBytes, TcpWrites, ::testing::Values(0u, 1000u, 512u * 1024u));

TEST(TcpSource, OneByteSendsAreReassembled) {
  const hilrig::StreamConfig c = tcp_stream(256);
  hilrig::FrameSource src(c);
  hilrig::TcpSocket raw = hilrig::TcpSocket::connect_to("127.0.0.1", src.endpoint()["port"], 0, "", true,
                                                        hilrig::now_ns() + 1'000'000'000);
  std::vector<std::size_t> lens;
  const std::vector<std::uint8_t> bytes = stream_bytes(c, 4, &lens);
  hilrig::RxCounters counters;
  hilrig::RxChecker check(counters);
  std::vector<std::uint64_t> got;
  unsigned malformed = 0;
  for (std::uint8_t b : bytes) {
    ASSERT_EQ(::send(raw.fd(), &b, 1, MSG_NOSIGNAL), 1);
    hilrig::FrameHeader h;
    if (src.wait(0))
      while (const hilrig::FrameView f = src.take()) {
        if (f.malformed) ++malformed;
        else if (check.on_frame(f.data, f.len, hilrig::now_ns(), &h)) got.push_back(h.seq);
        src.release();
      }
  }
  const auto rest = receive(src, check, unsigned(lens.size() - got.size()), &malformed);
  got.insert(got.end(), rest.begin(), rest.end());
  EXPECT_EQ(got, (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(malformed, 0u);
  EXPECT_EQ(counters.pattern_errors.load(), 0u);
}

TEST(TcpSource, EofAtAFrameBoundaryEndsTheStreamQuietly) {
  const hilrig::StreamConfig c = tcp_stream(256);
  hilrig::FrameSource src(c);
  std::vector<std::size_t> lens;
  const std::vector<std::uint8_t> bytes = stream_bytes(c, 3, &lens);
  {
    hilrig::TcpSocket raw = hilrig::TcpSocket::connect_to("127.0.0.1", src.endpoint()["port"], 0, "", false,
                                                          hilrig::now_ns() + 1'000'000'000);
    ASSERT_EQ(::send(raw.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL), ssize_t(bytes.size()));
  }  // closed: EOF
  hilrig::RxCounters counters;
  hilrig::RxChecker check(counters);
  unsigned malformed = 0;
  EXPECT_EQ(receive(src, check, 3, &malformed).size(), 3u);
  EXPECT_FALSE(src.next(50'000'000));  // nothing more: the stream ended
  EXPECT_EQ(malformed, 0u);
  EXPECT_TRUE(counters.eob_received.load());
  EXPECT_TRUE(src.warnings().empty());
}

TEST(TcpSource, EofInsideAFrameIsOneMalformedFrameAndSaysSo) {
  const hilrig::StreamConfig c = tcp_stream(256);
  hilrig::FrameSource src(c);
  std::vector<std::size_t> lens;
  const std::vector<std::uint8_t> bytes = stream_bytes(c, 3, &lens);
  {
    hilrig::TcpSocket raw = hilrig::TcpSocket::connect_to("127.0.0.1", src.endpoint()["port"], 0, "", false,
                                                          hilrig::now_ns() + 1'000'000'000);
    ASSERT_EQ(::send(raw.fd(), bytes.data(), 256 + 60, MSG_NOSIGNAL), 316);
  }
  hilrig::RxCounters counters;
  hilrig::RxChecker check(counters);
  unsigned malformed = 0;
  EXPECT_EQ(receive(src, check, 2, &malformed), std::vector<std::uint64_t>{0});
  EXPECT_EQ(malformed, 1u);
  EXPECT_EQ(counters.malformed_frames.load(), 1u);
  const std::vector<std::string> w = src.warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("inside a frame (60 of its 256 bytes arrived)"), std::string::npos) << w[0];
}

TEST(TcpSink, ConnectWithNobodyListeningFailsNamingHostAndPort) {
  std::uint16_t port = 0;
  {
    hilrig::TcpSocket l = hilrig::TcpSocket::listen_on("127.0.0.1", 0, 0);
    port = l.local_port();
  }  // closed: nothing listens on port now
  const std::uint64_t t0 = hilrig::now_ns();
  try {
    hilrig::TcpSocket s = hilrig::TcpSocket::connect_to("127.0.0.1", port, 0, "", false, t0 + 200'000'000);
    FAIL() << "connected to a closed port";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port)), std::string::npos) << e.what();
  }
  EXPECT_GE(hilrig::now_ns() - t0, 150'000'000u);  // retried until the deadline
}

TEST(TcpSink, ConnectRetriesUntilTheReceiverListens) {
  std::uint16_t port = 0;
  {
    hilrig::TcpSocket l = hilrig::TcpSocket::listen_on("127.0.0.1", 0, 0);
    port = l.local_port();
  }
  std::thread late([port] {
    hilrig::sleep_for_ns(100'000'000);
    hilrig::TcpSocket l = hilrig::TcpSocket::listen_on("127.0.0.1", port, 0);
    hilrig::sleep_for_ns(500'000'000);
  });
  hilrig::TcpSocket s = hilrig::TcpSocket::connect_to("127.0.0.1", port, 0, "", false, hilrig::now_ns() + 5'000'000'000);
  EXPECT_TRUE(s.valid());
  late.join();
}

TEST(TcpSink, CongestionControlIsSetAndAnUnknownOneIsRefusedByName) {
  hilrig::TcpSocket l = hilrig::TcpSocket::listen_on("127.0.0.1", 0, 0);
  hilrig::TcpSocket s = hilrig::TcpSocket::connect_to("127.0.0.1", l.local_port(), 0, "reno", false,
                                                      hilrig::now_ns() + 1'000'000'000);
  EXPECT_EQ(s.info().congestion, "reno");
  try {
    hilrig::TcpSocket bad = hilrig::TcpSocket::connect_to("127.0.0.1", l.local_port(), 0, "nosuchcc", false,
                                                          hilrig::now_ns() + 1'000'000'000);
    FAIL() << "congestion control nosuchcc was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/sys/net/ipv4/tcp_allowed_congestion_control"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("nosuchcc"), std::string::npos) << e.what();
  }
}

// The simulator's link: frames the connection does not take stay pending, whole; the
// oldest are discarded on overflow; what arrives is whole frames with exactly that gap.
TEST(TcpSink, PendingFramesStayWholeAndDroppedOnesAreMissingExactly) {
  hilrig::StreamConfig c = tcp_stream(4048);
  c.transport.socket_buffer_bytes = 64 * 1024;  // small both ends: the link fills fast
  hilrig::FrameSource src(c);
  hilrig::FrameSink sink(towards(c, src));
  const hilrig::PatternFramer framer(c);
  std::uint64_t seq = 0, sent = 0, dropped = 0;
  // Offer frames until the connection holds no more (nobody reads yet).
  for (int round = 0; round < 10000 && sink.pending() == 0; ++round) {
    while (std::uint8_t* out = sink.acquire(0)) sink.commit(framer.build(seq++, 0, out));
    sent += sink.send_some(hilrig::now_ns());
  }
  ASSERT_GT(sink.pending(), 2u);
  dropped = sink.drop_pending(2);  // overflow: the oldest two go
  EXPECT_EQ(dropped, 2u);
  hilrig::RxCounters counters;
  hilrig::RxChecker check(counters);
  unsigned malformed = 0;
  // Read while the rest drains; then one more frame at the end.
  std::vector<std::uint64_t> got;
  const std::uint64_t deadline = hilrig::now_ns() + 5'000'000'000;
  while (sink.pending() && hilrig::now_ns() < deadline) {
    sent += sink.send_some(hilrig::now_ns());
    const auto part = receive(src, check, 1, &malformed);
    got.insert(got.end(), part.begin(), part.end());
  }
  ASSERT_EQ(sink.pending(), 0u);
  while (std::uint8_t* out = sink.acquire(0)) {
    sink.commit(framer.build(seq++, hilrig::kFlagEOB, out));
    break;
  }
  sent += sink.flush(hilrig::now_ns() + 1'000'000'000);
  const auto rest = receive(src, check, unsigned(sent - got.size()), &malformed);
  got.insert(got.end(), rest.begin(), rest.end());
  EXPECT_EQ(got.size(), sent);
  EXPECT_EQ(sent + dropped, seq);
  EXPECT_EQ(malformed, 0u);
  EXPECT_EQ(counters.missing_frames.load(), 2u);
  EXPECT_EQ(counters.pattern_errors.load(), 0u);
}

}  // namespace tcp_tests
