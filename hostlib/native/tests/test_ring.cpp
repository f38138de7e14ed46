// The shm ring's producer and consumer ends: two threads, random frame sizes and
// stalls on both sides; every frame arrives once, in order, intact; over one mapping
// or over two (the consumer opened by path, as another process does), and across two
// processes; each publish strategy.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <random>
#include <thread>

#include "hilrig/core/clock.hpp"
#include "hilrig/io/shm_ring.hpp"

namespace {
// ThreadSanitizer runs these ~20x slower: fewer frames there (the interleavings per
// frame are the same), so that tsan.RingFuzz.* stays a few seconds per test.
#if defined(__SANITIZE_THREAD__)
constexpr std::uint64_t kFramesDivisor = 10;
#else
constexpr std::uint64_t kFramesDivisor = 1;
#endif

void fill(std::uint8_t* p, std::uint32_t len, std::uint64_t n) {
  for (std::uint32_t i = 0; i < len; ++i) p[i] = std::uint8_t(n * 31 + i);
}
}  // namespace

using hilrig::RingPublish;

// (publish strategy, seed)
class RingFuzz : public ::testing::TestWithParam<std::tuple<RingPublish, unsigned>> {
 protected:
  RingPublish publish() const { return std::get<0>(GetParam()); }
  unsigned seed() const { return std::get<1>(GetParam()); }
};

TEST_P(RingFuzz, TwoThreadsEveryFrameOnceInOrderIntact) {
  const unsigned seed = this->seed();
  const std::uint32_t slots = 4 + seed * 7, slot_bytes = 1000;
  const auto ring = hilrig::ShmRing::create(slots, slot_bytes, publish());
  auto prod = std::make_unique<hilrig::ShmProducer>(ring);
  // The consumer opens the ring by path, as the other process does.
  auto cons = std::make_unique<hilrig::ShmConsumer>(hilrig::ShmRing::open(ring->path(), publish()));
  constexpr std::uint64_t kFrames = 200000 / kFramesDivisor;
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
  const unsigned seed = this->seed();
  const std::uint32_t slots = 3 + seed * 5, slot_bytes = 256;
  const auto ring = hilrig::ShmRing::create(slots, slot_bytes, publish());
  auto cons = std::make_unique<hilrig::ShmConsumer>(ring);
  auto prod = std::make_unique<hilrig::ShmProducer>(hilrig::ShmRing::open(ring->path(), publish()));
  constexpr std::uint64_t kFrames = 200000 / kFramesDivisor;
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

// The producer in a child process (opening the ring by path), the consumer here:
// batched publish and release as in the streams, every frame once, in order, intact.
TEST_P(RingFuzz, AcrossProcessesEveryFrameOnceInOrderIntact) {
  const unsigned seed = this->seed();
  const std::uint32_t slots = 5 + seed * 3, slot_bytes = 200;
  const auto ring = hilrig::ShmRing::create(slots, slot_bytes, publish());
  hilrig::ShmConsumer cons(ring);
  constexpr std::uint64_t kFrames = 50000 / kFramesDivisor;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int rc = 0;
    try {
      hilrig::ShmProducer prod(hilrig::ShmRing::open(ring->path(), publish()));
      std::mt19937 rng(seed);
      for (std::uint64_t n = 0; n < kFrames; ++n) {
        std::uint8_t* s = prod.acquire();
        while (!s) s = prod.acquire_wait(50'000'000);
        const std::uint32_t len = 8 + rng() % (slot_bytes - 8);
        std::memcpy(s, &n, 8);
        fill(s + 8, len - 8, n);
        prod.publish_deferred(len);
        if (rng() % 8 == 0) prod.flush_published();
      }
      prod.flush_published();
    } catch (...) {
      rc = 1;
    }
    _exit(rc);
  }
  std::uint64_t bad = 0;
  std::vector<std::uint8_t> expect(slot_bytes);
  std::mt19937 rng(seed + 3);
  for (std::uint64_t n = 0; n < kFrames; ++n) {
    std::uint32_t len = 0;
    const std::uint8_t* p = cons.peek(&len);
    // A dead child would leave this waiting forever: give up after 10 s of nothing.
    for (int waits = 0; !p && waits < 200; ++waits) p = cons.peek_wait(&len, 50'000'000);
    ASSERT_NE(p, nullptr) << "frame " << n << " never came";
    std::uint64_t got;
    std::memcpy(&got, p, 8);
    fill(expect.data(), len - 8, n);
    if (got != n || len > slot_bytes || std::memcmp(p + 8, expect.data(), len - 8) != 0) ++bad;
    cons.release_deferred();
    if (rng() % 8 == 0) cons.flush_released();
  }
  cons.flush_released();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(bad, 0u);
  std::uint32_t len;
  EXPECT_EQ(cons.peek(&len), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Strategies, RingFuzz,
                         ::testing::Combine(::testing::ValuesIn(hilrig::kRingPublishAll), ::testing::Values(1u, 2u, 3u, 7u)),
                         [](const auto& info) {
                           return std::string(hilrig::ring_publish_name(std::get<0>(info.param))) + "_" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(Ring, PublishNamesRoundTripAndAWrongNameIsRefused) {
  for (RingPublish p : hilrig::kRingPublishAll) EXPECT_EQ(hilrig::parse_ring_publish(hilrig::ring_publish_name(p)), p);
  try {
    (void)hilrig::parse_ring_publish("batch");
    FAIL() << "\"batch\" was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"batch\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("adaptive"), std::string::npos) << e.what();
  }
}

// Both processes must publish one way: an end of another strategy is refused on open.
TEST(Ring, OpeningARingOfAnotherStrategyIsRefused) {
  const auto ring = hilrig::ShmRing::create(4, 64, RingPublish::adaptive);
  EXPECT_EQ(ring->publish(), RingPublish::adaptive);
  EXPECT_EQ(hilrig::ShmRing::open(ring->path(), RingPublish::adaptive)->publish(), RingPublish::adaptive);
  try {
    (void)hilrig::ShmRing::open(ring->path(), RingPublish::batched);
    FAIL() << "a batched end opened an adaptive ring";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("\"adaptive\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"batched\""), std::string::npos) << e.what();
  }
}

TEST(Ring, FullRingRefusesAndWaitTimesOut) {
  for (RingPublish how : hilrig::kRingPublishAll) {
    SCOPED_TRACE(hilrig::ring_publish_name(how));
    hilrig::ShmProducer prod(hilrig::ShmRing::create(4, 64, how));
    for (int i = 0; i < 4; ++i) {
      ASSERT_NE(prod.acquire(), nullptr);
      prod.publish(10);
    }
    EXPECT_EQ(prod.acquire(), nullptr);
    EXPECT_EQ(prod.free_slots(), 0u);
    auto t0 = hilrig::now_ns();
    EXPECT_EQ(prod.acquire_wait(20'000'000), nullptr);
    EXPECT_GE(hilrig::now_ns() - t0, 19'000'000u);
  }
}

TEST(Ring, MemfdIsPrivateAndHasNoNameInDevShm) {
  const auto r = hilrig::ShmRing::create(4, 64);
  struct stat st{};
  ASSERT_EQ(stat(r->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(r->path().rfind("/proc/", 0), 0u);
}

// Both ends over one mapping, each in its own thread; the ends keep the mapping alive
// after the creator's handle is gone.
TEST(Ring, ProducerAndConsumerShareOneMappingAcrossThreads) {
  auto ring = hilrig::ShmRing::create(8, 64);
  hilrig::ShmProducer prod(ring);
  hilrig::ShmConsumer cons(ring);
  const std::weak_ptr<hilrig::ShmRing> watch = ring;
  ring.reset();
  EXPECT_FALSE(watch.expired());
  constexpr std::uint64_t kFrames = 20000;
  std::thread producer([&] {
    for (std::uint64_t n = 0; n < kFrames; ++n) {
      std::uint8_t* s = nullptr;
      while (!(s = prod.acquire_wait(50'000'000))) {
      }
      std::memcpy(s, &n, 8);
      prod.publish(8);
    }
  });
  std::uint64_t out_of_order = 0;
  for (std::uint64_t n = 0; n < kFrames; ++n) {
    std::uint32_t len = 0;
    const std::uint8_t* p = nullptr;
    while (!(p = cons.peek_wait(&len, 50'000'000))) {
    }
    std::uint64_t got;
    std::memcpy(&got, p, 8);
    out_of_order += got != n || len != 8;
    cons.release();
  }
  producer.join();
  EXPECT_EQ(out_of_order, 0u);
}

// A consumer opened by path in this process reads what a producer on the creator's
// mapping published before it opened; a producer that comes later carries on where
// the last one stopped.
class RingEachStrategy : public ::testing::TestWithParam<RingPublish> {};

TEST_P(RingEachStrategy, EndsOpenedLaterCarryOnWhereTheRingStands) {
  const auto ring = hilrig::ShmRing::create(4, 64, GetParam());
  auto publish = [](hilrig::ShmProducer& prod, std::uint8_t value) {
    std::uint8_t* s = prod.acquire();
    ASSERT_NE(s, nullptr);
    *s = value;
    prod.publish(1);
  };
  {
    hilrig::ShmProducer first(ring);
    publish(first, 1);
    publish(first, 2);
  }
  hilrig::ShmConsumer cons(hilrig::ShmRing::open(ring->path(), GetParam()));
  EXPECT_EQ(cons.ring().slot_count(), 4u);
  EXPECT_EQ(cons.slot_bytes(), 64u);
  hilrig::ShmProducer second(ring);
  publish(second, 3);
  for (std::uint8_t want : {1, 2, 3}) {
    std::uint32_t len = 0;
    const std::uint8_t* p = cons.peek(&len);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(*p, want);
    EXPECT_EQ(len, 1u);
    cons.release();
  }
  std::uint32_t len = 0;
  EXPECT_EQ(cons.peek(&len), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Strategies, RingEachStrategy, ::testing::ValuesIn(hilrig::kRingPublishAll),
                         [](const auto& info) { return std::string(hilrig::ring_publish_name(info.param)); });

// Single producer, single consumer: a second end of the same kind on one mapping is
// refused while the first lives.
TEST(Ring, OneEndOfEachKindPerMapping) {
  const auto ring = hilrig::ShmRing::create(4, 64);
  {
    hilrig::ShmProducer prod(ring);
    hilrig::ShmConsumer cons(ring);
    EXPECT_THROW(hilrig::ShmProducer{ring}, std::logic_error);
    EXPECT_THROW(hilrig::ShmConsumer{ring}, std::logic_error);
  }
  EXPECT_NO_THROW(hilrig::ShmProducer{ring});
  EXPECT_THROW(hilrig::ShmConsumer{nullptr}, std::invalid_argument);
}
