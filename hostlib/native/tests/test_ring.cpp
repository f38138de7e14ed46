// ShmRing: two threads, random frame sizes and stalls on both sides; every frame
// arrives once, in order, intact.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <memory>
#include <random>
#include <thread>

#include "hilrig/core/clock.hpp"
#include "hilrig/io/shm_ring.hpp"

namespace {
void fill(std::uint8_t* p, std::uint32_t len, std::uint64_t n) {
  for (std::uint32_t i = 0; i < len; ++i) p[i] = std::uint8_t(n * 31 + i);
}
}  // namespace

class RingFuzz : public ::testing::TestWithParam<unsigned> {};

TEST_P(RingFuzz, TwoThreadsEveryFrameOnceInOrderIntact) {
  const unsigned seed = GetParam();
  const std::uint32_t slots = 4 + seed * 7, slot_bytes = 1000;
  std::unique_ptr<hilrig::ShmRing> prod(hilrig::ShmRing::create(slots, slot_bytes));
  // The consumer opens the ring by path, as the other process does.
  std::unique_ptr<hilrig::ShmRing> cons(hilrig::ShmRing::open(prod->path()));
  constexpr std::uint64_t kFrames = 200000;
  std::thread producer([&] {
    std::mt19937 rng(seed);
    for (std::uint64_t n = 0; n < kFrames; ++n) {
      std::uint8_t* s = nullptr;
      while (!(s = prod->acquire_wait(50'000'000))) {
      }
      std::uint32_t len = 8 + rng() % (slot_bytes - 8);
      std::memcpy(s, &n, 8);
      fill(s + 8, len - 8, n);
      prod->publish(len);
      if (rng() % 5000 == 0) hilrig::sleep_for_ns(200'000);  // producer stall: consumer sleeps on the futex
    }
  });
  std::mt19937 rng(seed + 100);
  std::uint64_t bad = 0;
  std::vector<std::uint8_t> expect(slot_bytes);
  for (std::uint64_t n = 0; n < kFrames; ++n) {
    std::uint32_t len = 0;
    const std::uint8_t* p = nullptr;
    while (!(p = cons->peek_wait(&len, 50'000'000))) {
    }
    std::uint64_t got;
    std::memcpy(&got, p, 8);
    fill(expect.data(), len - 8, n);
    if (got != n || len > slot_bytes || std::memcmp(p + 8, expect.data(), len - 8) != 0) ++bad;
    cons->release();
    if (rng() % 5000 == 0) hilrig::sleep_for_ns(200'000);  // consumer stall: producer waits on the futex
  }
  producer.join();
  EXPECT_EQ(bad, 0u);
  std::uint32_t len;
  EXPECT_EQ(cons->peek(&len), nullptr);
}


// Batched publish/release (what RxStream, TxStream and the simulator use): random
// batch sizes on both sides, random stalls; every frame once, in order, intact.
TEST_P(RingFuzz, BatchedPublishAndReleaseEveryFrameOnceInOrderIntact) {
  const unsigned seed = GetParam();
  const std::uint32_t slots = 3 + seed * 5, slot_bytes = 256;
  std::unique_ptr<hilrig::ShmRing> cons(hilrig::ShmRing::create(slots, slot_bytes));
  std::unique_ptr<hilrig::ShmRing> prod(hilrig::ShmRing::open(cons->path()));
  constexpr std::uint64_t kFrames = 200000;
  std::thread producer([&] {
    std::mt19937 rng(seed);
    unsigned batch = 0, pending = 0;
    for (std::uint64_t n = 0; n < kFrames; ++n) {
      if (pending == 0) batch = 1 + rng() % 40;  // may exceed the ring: acquire_wait must flush
      std::uint8_t* s = prod->acquire();
      while (!s) s = prod->acquire_wait(50'000'000);
      std::uint32_t len = 8 + rng() % (slot_bytes - 8);
      std::memcpy(s, &n, 8);
      fill(s + 8, len - 8, n);
      prod->publish_deferred(len);
      if (++pending >= batch) {
        prod->flush_published();
        pending = 0;
      }
      if (rng() % 20000 == 0) hilrig::sleep_for_ns(100'000);
    }
    prod->flush_published();
  });
  std::mt19937 rng(seed + 7);
  std::uint64_t bad = 0;
  std::vector<std::uint8_t> expect(slot_bytes);
  unsigned batch = 1 + rng() % 40, pending = 0;
  for (std::uint64_t n = 0; n < kFrames; ++n) {
    std::uint32_t len = 0;
    const std::uint8_t* p = cons->peek(&len);
    while (!p) p = cons->peek_wait(&len, 50'000'000);
    std::uint64_t got;
    std::memcpy(&got, p, 8);
    fill(expect.data(), len - 8, n);
    if (got != n || len > slot_bytes || std::memcmp(p + 8, expect.data(), len - 8) != 0) ++bad;
    cons->release_deferred();
    if (++pending >= batch) {
      cons->flush_released();
      pending = 0;
      batch = 1 + rng() % 40;
    }
    if (rng() % 20000 == 0) hilrig::sleep_for_ns(100'000);
  }
  cons->flush_released();
  producer.join();
  EXPECT_EQ(bad, 0u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, RingFuzz, ::testing::Values(1u, 2u, 3u, 7u));

TEST(Ring, FullRingRefusesAndWaitTimesOut) {
  std::unique_ptr<hilrig::ShmRing> r(hilrig::ShmRing::create(4, 64));
  for (int i = 0; i < 4; ++i) {
    ASSERT_NE(r->acquire(), nullptr);
    r->publish(10);
  }
  EXPECT_EQ(r->acquire(), nullptr);
  auto t0 = hilrig::now_ns();
  EXPECT_EQ(r->acquire_wait(20'000'000), nullptr);
  EXPECT_GE(hilrig::now_ns() - t0, 19'000'000u);
}

TEST(Ring, MemfdIsPrivateAndHasNoNameInDevShm) {
  std::unique_ptr<hilrig::ShmRing> r(hilrig::ShmRing::create(4, 64));
  struct stat st{};
  ASSERT_EQ(stat(r->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(r->path().rfind("/proc/", 0), 0u);
}
