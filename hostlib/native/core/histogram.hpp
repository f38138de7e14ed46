// Latency histogram, log-linear buckets (32 per power of two, ~3 % resolution).
// One writer thread; readers may snapshot percentiles at any time (relaxed atomics).
#pragma once
#include <array>
#include <atomic>
#include <cstdint>

namespace hilrig {

class LatencyHistogram {
 public:
  static constexpr unsigned kSubBits = 5;
  static constexpr unsigned kSub = 1u << kSubBits;
  static constexpr unsigned kBuckets = 2 * kSub + (64 - kSubBits - 1) * kSub;

  void record(std::uint64_t v);  // writer only
  void reset();
  std::uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  std::uint64_t max() const { return max_.load(std::memory_order_relaxed); }
  // Value at quantile q (0..1): upper edge of the bucket holding it, capped at max(); 0 if empty.
  std::uint64_t percentile(double q) const;

  static unsigned bucket_of(std::uint64_t v);
  static std::uint64_t bucket_upper(unsigned b);

 private:
  std::array<std::atomic<std::uint64_t>, kBuckets> buckets_{};
  std::atomic<std::uint64_t> count_{0}, max_{0};
};

}  // namespace hilrig
