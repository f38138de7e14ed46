// The one helper for the native core's counters: a std::atomic<u64> written by one
// thread and read by any (stats while streaming). One writer needs no atomic
// read-modify-write: a relaxed load + store is exact and costs no lock prefix.
#pragma once
#include <atomic>
#include <cstdint>

namespace hilrig {

using Counter = std::atomic<std::uint64_t>;

// Single writer only.
inline void counter_add(Counter& c, std::uint64_t d = 1) {
  c.store(c.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}
// Single writer only; stops at 0 (a count taken back never wraps).
inline void counter_sub(Counter& c, std::uint64_t d) {
  const std::uint64_t v = c.load(std::memory_order_relaxed);
  c.store(v >= d ? v - d : 0, std::memory_order_relaxed);
}
// Single writer only: c = max(c, v).
inline void counter_max(Counter& c, std::uint64_t v) {
  if (v > c.load(std::memory_order_relaxed)) c.store(v, std::memory_order_relaxed);
}
inline std::uint64_t counter_get(const Counter& c) { return c.load(std::memory_order_relaxed); }

}  // namespace hilrig
