#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <cstring>
#include <random>
#include <vector>

#include "hilrig/core/histogram.hpp"
#include "hilrig/core/pattern.hpp"

using hilrig::SampleFormat;

class PatternCheck : public ::testing::TestWithParam<std::tuple<SampleFormat, std::size_t, unsigned>> {};

// Exactly K corrupted words (distinct positions, each changed) -> exactly K errors.
TEST_P(PatternCheck, CountsExactlyKCorruptedWords) {
  auto [fmt, n_words, seed] = GetParam();
  const unsigned wb = hilrig::bytes_per_sample(fmt);
  std::mt19937_64 rng(seed);
  const std::uint64_t first = (std::uint64_t(1) << 32) - n_words / 2 + seed;  // crosses the u32 wrap
  std::vector<std::uint8_t> buf(n_words * wb + 1);
  std::uint8_t* p = buf.data() + (seed & 1);  // odd seeds: unaligned payload
  hilrig::pattern_fill(first, p, n_words, fmt);
  ASSERT_EQ(hilrig::pattern_check(first, p, n_words, fmt), 0u);
  std::vector<std::size_t> idx(n_words);
  std::iota(idx.begin(), idx.end(), 0);
  std::shuffle(idx.begin(), idx.end(), rng);
  const std::size_t k = std::min<std::size_t>(n_words, 1 + rng() % 50);
  for (std::size_t i = 0; i < k; ++i) p[idx[i] * wb + rng() % wb] ^= std::uint8_t(1 + rng() % 255);
  EXPECT_EQ(hilrig::pattern_check(first, p, n_words, fmt), k);
  // A fresh pattern checked against a shifted start word is wrong in every word.
  hilrig::pattern_fill(first, p, n_words, fmt);
  EXPECT_EQ(hilrig::pattern_check(first + 1, p, n_words, fmt), n_words);
}

INSTANTIATE_TEST_SUITE_P(Formats, PatternCheck,
                         ::testing::Combine(::testing::Values(SampleFormat::sc16, SampleFormat::sc8),
                                            ::testing::Values(std::size_t(1), std::size_t(52), std::size_t(101), std::size_t(338), std::size_t(1988), std::size_t(70000)),
                                            ::testing::Values(1u, 2u, 7u)));

// Every length up to a few vectors, every word corrupted on its own: the vector tail
// (an overlapping last vector) counts each word once and fill writes nothing past n.
TEST(Pattern, EveryTailLengthCountsEachWordOnceAndStaysInBounds) {
  for (SampleFormat fmt : {SampleFormat::sc16, SampleFormat::sc8}) {
    const unsigned wb = hilrig::bytes_per_sample(fmt);
    for (std::size_t n = 1; n <= 80; ++n) {
      std::vector<std::uint8_t> buf(n * wb + 64, 0xEE);
      std::uint8_t* p = buf.data() + 1;
      const std::uint64_t first = 65530 + n;
      hilrig::pattern_fill(first, p, n, fmt);
      ASSERT_EQ(hilrig::pattern_check(first, p, n, fmt), 0u) << "n=" << n;
      ASSERT_TRUE(std::all_of(p + n * wb, buf.data() + buf.size(), [](std::uint8_t b) { return b == 0xEE; }))
          << "fill wrote past word " << n;
      for (std::size_t w = 0; w < n; ++w) {
        p[w * wb] ^= 0x40;
        ASSERT_EQ(hilrig::pattern_check(first, p, n, fmt), 1u) << "n=" << n << " word " << w;
        p[w * wb] ^= 0x40;
      }
    }
  }
}

TEST(Pattern, Sc8WordsWrapAt16Bits) {
  std::vector<std::uint16_t> w(4);
  hilrig::pattern_fill(65534, w.data(), 4, SampleFormat::sc8);
  EXPECT_EQ(w, (std::vector<std::uint16_t>{65534, 65535, 0, 1}));
}

// One channel's own buffer (UHD/SoapySDR per-channel buffers): word (tick + i) * C + c.
TEST(Pattern, PerChannelBuffersMatchTheInterleavedStream) {
  for (SampleFormat fmt : {SampleFormat::sc16, SampleFormat::sc8}) {
    const unsigned wb = hilrig::bytes_per_sample(fmt);
    for (unsigned C = 1; C <= 4; ++C) {
      const std::size_t n = 333;
      const std::uint64_t tick = 65530;  // crosses the 16-bit wrap for sc8
      std::vector<std::uint8_t> stream(n * C * wb);
      hilrig::pattern_fill(tick * C, stream.data(), n * C, fmt);
      for (unsigned c = 0; c < C; ++c) {
        std::vector<std::uint8_t> chan(n * wb), want(n * wb);
        for (std::size_t i = 0; i < n; ++i) std::memcpy(&want[i * wb], &stream[(i * C + c) * wb], wb);
        hilrig::pattern_fill_channel(tick, C, c, chan.data(), n, fmt);
        EXPECT_EQ(chan, want) << "C=" << C << " c=" << c;
        EXPECT_EQ(hilrig::pattern_check_channel(tick, C, c, chan.data(), n, fmt), 0u);
        chan[wb * 7] ^= 1;
        chan[wb * 300] ^= 1;
        EXPECT_EQ(hilrig::pattern_check_channel(tick, C, c, chan.data(), n, fmt), 2u);
        if (C > 1) {
          EXPECT_EQ(hilrig::pattern_check_channel(tick, C, (c + 1) % C, want.data(), n, fmt), n);
        }
      }
    }
  }
}

TEST(Histogram, EmptyAndResetGiveZero) {
  hilrig::LatencyHistogram h;
  EXPECT_EQ(h.percentile(0.5), 0u);
  EXPECT_EQ(h.count(), 0u);
  h.record(12345);
  EXPECT_EQ(h.count(), 1u);
  EXPECT_EQ(h.max(), 12345u);
  EXPECT_EQ(h.percentile(0.5), 12345u);  // capped at max: never above what was seen
  EXPECT_GE(hilrig::LatencyHistogram::bucket_upper(hilrig::LatencyHistogram::bucket_of(12345)), 12345u);
  h.reset();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.percentile(0.99), 0u);
  for (std::uint64_t v : {0ull, 1ull, 31ull, 32ull, 1ull << 40, ~0ull}) {
    const unsigned b = hilrig::LatencyHistogram::bucket_of(v);
    ASSERT_LT(b, hilrig::LatencyHistogram::kBuckets);
    ASSERT_GE(hilrig::LatencyHistogram::bucket_upper(b), v) << v;
  }
}

TEST(Histogram, PercentilesWithinBucketResolution) {
  hilrig::LatencyHistogram h;
  for (std::uint64_t v = 1; v <= 100000; ++v) h.record(v * 10);
  EXPECT_EQ(h.count(), 100000u);
  EXPECT_EQ(h.max(), 1000000u);
  auto p50 = double(h.percentile(0.5)), p99 = double(h.percentile(0.99));
  EXPECT_NEAR(p50, 500000.0, 500000.0 * 0.04);
  EXPECT_NEAR(p99, 990000.0, 990000.0 * 0.04);
  EXPECT_EQ(h.percentile(1.0), 1000000u);
  for (unsigned b = 1; b < hilrig::LatencyHistogram::kBuckets; ++b)
    ASSERT_EQ(hilrig::LatencyHistogram::bucket_of(hilrig::LatencyHistogram::bucket_upper(b)), b);
}
