#pragma once
#include <sys/prctl.h>

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
// A thread's timer slack lets the kernel end its sleeps up to 50 us late by default (to
// batch wake-ups); a pacing thread asks for 1 ns once, and its sleeps then end ~5 us
// after their deadline here (p99 ~15 us beside two CPU hogs).
inline void use_fine_timer_slack() {
  thread_local const bool done = ::prctl(PR_SET_TIMERSLACK, 1UL) == 0;
  (void)done;
}
}  // namespace hilrig
