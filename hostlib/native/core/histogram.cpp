#include "hilrig/core/histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace hilrig {

unsigned LatencyHistogram::bucket_of(std::uint64_t v) {
  if (v < 2 * kSub) return unsigned(v);
  unsigned e = 63u - unsigned(std::countl_zero(v));  // e >= kSubBits + 1
  unsigned sub = unsigned(v >> (e - kSubBits)) & (kSub - 1);
  return 2 * kSub + (e - kSubBits - 1) * kSub + sub;
}

std::uint64_t LatencyHistogram::bucket_upper(unsigned b) {
  if (b < 2 * kSub) return b;
  unsigned e = (b - 2 * kSub) / kSub + kSubBits + 1;
  std::uint64_t sub = (b - 2 * kSub) % kSub;
  std::uint64_t lo = (std::uint64_t(1) << e) | (sub << (e - kSubBits));
  return lo + (std::uint64_t(1) << (e - kSubBits)) - 1;
}

void LatencyHistogram::record(std::uint64_t v) {
  auto& b = buckets_[bucket_of(v)];
  b.store(b.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  count_.store(count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (v > max_.load(std::memory_order_relaxed)) max_.store(v, std::memory_order_relaxed);
}

void LatencyHistogram::reset() {
  for (auto& b : buckets_) b.store(0, std::memory_order_relaxed);
  count_.store(0);
  max_.store(0);
}

std::uint64_t LatencyHistogram::percentile(double q) const {
  std::uint64_t n = 0;
  for (auto& b : buckets_) n += b.load(std::memory_order_relaxed);
  if (n == 0) return 0;
  std::uint64_t rank = std::uint64_t(std::ceil(std::clamp(q, 0.0, 1.0) * double(n)));
  if (rank == 0) rank = 1;
  std::uint64_t acc = 0;
  for (unsigned i = 0; i < kBuckets; ++i) {
    acc += buckets_[i].load(std::memory_order_relaxed);
    if (acc >= rank) return std::min(bucket_upper(i), max());
  }
  return max();
}

}  // namespace hilrig
