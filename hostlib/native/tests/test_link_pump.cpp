// The link pump in real time over datagram socket pairs (what a TUN device is to it: one
// packet per read and write): packets come out intact, in order, no earlier than the
// configured delay, and the report counts them; stats are read while it runs.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "hilrig/core/clock.hpp"
#include "hilrig/link/link_pump.hpp"

namespace {
struct Pair {
  int fd[2] = {-1, -1};
  Pair() {
    if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fd) != 0) throw std::runtime_error("socketpair");
  }
  ~Pair() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
};
}  // namespace

TEST(LinkPump, DeliversEveryPacketInOrderAfterTheDelay) {
  Pair in, out;   // write in.fd[0] -> pump reads in.fd[1], writes out.fd[0] -> read out.fd[1]
  hilrig::LinkSpec spec;
  spec.delay_ns = 5'000'000;
  hilrig::LinkPump pump(in.fd[1], out.fd[0], spec);
  pump.start();
  constexpr int kPackets = 200;
  std::uint64_t sent_ns[kPackets];
  for (int i = 0; i < kPackets; ++i) {
    char buf[100];
    std::memset(buf, i, sizeof buf);
    std::memcpy(buf, &i, sizeof i);
    sent_ns[i] = hilrig::now_ns();
    ASSERT_EQ(::write(in.fd[0], buf, sizeof buf), ssize_t(sizeof buf));
    if (i % 20 == 0) (void)pump.stats();   // a reader while the pump runs
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  int next = 0;
  const auto deadline = hilrig::now_ns() + 10'000'000'000ull;
  while (next < kPackets && hilrig::now_ns() < deadline) {
    char buf[200];
    const ssize_t n = ::read(out.fd[1], buf, sizeof buf);
    if (n < 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    const std::uint64_t got_ns = hilrig::now_ns();
    ASSERT_EQ(n, 100);
    int seq;
    std::memcpy(&seq, buf, sizeof seq);
    ASSERT_EQ(seq, next);
    EXPECT_GE(got_ns - sent_ns[seq], spec.delay_ns);
    ++next;
  }
  EXPECT_EQ(next, kPackets);
  pump.stop();
  const auto st = pump.stats();
  EXPECT_EQ(st["packets_in"], kPackets);
  EXPECT_EQ(st["packets_out"], kPackets);
  EXPECT_EQ(st["bytes_out"], 100 * kPackets);
  EXPECT_EQ(st["write_errors"], 0);
  EXPECT_EQ(st["error"], "");
  EXPECT_GE(st["delay_ns"]["p50"].get<std::uint64_t>(), spec.delay_ns);
  EXPECT_EQ(st["delay_ns"]["count"], kPackets);
}

TEST(LinkPump, StopsPromptlyAndKeepsWhatIsInFlight) {
  Pair in, out;
  hilrig::LinkSpec spec;
  spec.delay_ns = 10'000'000'000ull;   // nothing falls due while this test runs
  hilrig::LinkPump pump(in.fd[1], out.fd[0], spec);
  pump.start();
  for (int i = 0; i < 10; ++i) ASSERT_EQ(::write(in.fd[0], "x", 1), 1);
  const auto t0 = hilrig::now_ns();
  while (pump.stats()["in_flight"] != 10 && hilrig::now_ns() - t0 < 5'000'000'000ull)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto stop0 = hilrig::now_ns();
  pump.stop();
  EXPECT_LT(hilrig::now_ns() - stop0, 1'000'000'000ull);   // the idle wait is bounded (100 ms)
  const auto st = pump.stats();
  EXPECT_EQ(st["in_flight"], 10);
  EXPECT_EQ(st["packets_out"], 0);
}

// Packets falling due 15 us apart (a queue draining at its rate: more than a wake-up's
// latency, less than the gap) are written a wake-up gap at a time, not one wake-up each.
// By construction: the forty are read together (a packet-mode pipe holds them), fall due
// over 585 us, and under load a sleep ends no earlier than a gap (30 us) after the last
// wake-up: about 20 gaps and a few wake-ups around them; one a packet would be forty.
TEST(LinkPump, CoalescesWakeUpsUnderLoad) {
  int in[2], out[2];
  ASSERT_EQ(::pipe2(in, O_DIRECT | O_NONBLOCK | O_CLOEXEC), 0);   // O_DIRECT: one packet per write and read
  ASSERT_EQ(::pipe2(out, O_DIRECT | O_NONBLOCK | O_CLOEXEC), 0);
  constexpr int kPackets = 40;
  ASSERT_GE(::fcntl(in[1], F_SETPIPE_SZ, 64 * 4096), 64 * 4096);   // a page a packet
  ASSERT_GE(::fcntl(out[1], F_SETPIPE_SZ, 64 * 4096), 64 * 4096);
  hilrig::LinkSpec spec;
  spec.delay_ns = 1'000'000;
  spec.rate_bps = 1000 * 8 / 15e-6;   // a 1000-byte packet takes 15 us
  char buf[1000] = {};
  for (int i = 0; i < kPackets; ++i) ASSERT_EQ(::write(in[1], buf, sizeof buf), ssize_t(sizeof buf));
  hilrig::LinkPump pump(in[0], out[1], spec);
  pump.start();
  const auto t0 = hilrig::now_ns();
  while (pump.stats()["packets_out"] != kPackets && hilrig::now_ns() - t0 < 5'000'000'000ull)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  const auto st = pump.stats();
  pump.stop();
  for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
  ASSERT_EQ(st["packets_in"], kPackets);
  ASSERT_EQ(st["packets_out"], kPackets);
  EXPECT_EQ(st["write_errors"], 0);
  EXPECT_LE(st["wakeups"].get<std::uint64_t>(), 30u) << st.dump();
  EXPECT_EQ(st["wake_gap_ns"], hilrig::LinkPump::kWakeGapNs);
  // Real-time priority is the pump's when the process may have it (root here).
  if (::geteuid() == 0) EXPECT_EQ(st["scheduling"], "fifo");
  else EXPECT_TRUE(st["scheduling"] == "fifo" || st["scheduling"] == "other");
}
