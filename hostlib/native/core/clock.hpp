#pragma once
#include <cerrno>
#include <cstdint>
#include <ctime>

namespace hilrig {
// CLOCK_MONOTONIC in ns: the clock of send_time_ns, shared by all processes of a host.
inline std::uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}
inline void sleep_until_ns(std::uint64_t t_ns) {
  timespec ts{time_t(t_ns / 1000000000ull), long(t_ns % 1000000000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}
inline void sleep_for_ns(std::uint64_t d_ns) { sleep_until_ns(now_ns() + d_ns); }
}  // namespace hilrig
