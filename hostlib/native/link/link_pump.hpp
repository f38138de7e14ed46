// One direction of hilrig-link: a thread that reads packets from one fd (a TUN device),
// schedules them with a LinkModel in real time (CLOCK_MONOTONIC) and writes each to the
// other fd when it falls due. It runs at the lowest real-time priority with a 1 ns timer
// slack when it may (a sleep then ends ~5 us after its deadline), and wakes at most once
// per kWakeGapNs, like a NIC's interrupt coalescing: under load one wake-up reads and
// writes a window's packets (at a real-time priority a wake-up per packet would preempt
// the senders per packet); an idle link's packet wakes it at once.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "hilrig/core/counter.hpp"
#include "hilrig/core/histogram.hpp"
#include "hilrig/link/link_model.hpp"

namespace hilrig {

class LinkPump {
 public:
  // fd_in, fd_out: non-blocking packet fds, owned by the caller and open while this runs.
  LinkPump(int fd_in, int fd_out, const LinkSpec& spec);
  ~LinkPump() { stop(); }
  LinkPump(const LinkPump&) = delete;
  LinkPump& operator=(const LinkPump&) = delete;

  // The least time between two wake-ups: the most a packet waits past its due time, or
  // in the input before it is read and time-stamped, besides the wake-up's own latency.
  static constexpr std::uint64_t kWakeGapNs = 30'000;

  void start();
  void stop();   // joins; packets still in flight are counted in_flight, never written
  // The model's counters and histograms, in_flight, write_errors, wakeups (sleeps
  // ended), the thread's error, its scheduling policy and the coalesced reads' waits.
  nlohmann::json stats() const;

 private:
  void run();
  static std::string claim_timing();   // "fifo" or "other": the policy this thread got
  int in_, out_;
  LinkModel model_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  Counter in_flight_{0}, write_errors_{0}, wakeups_{0};
  mutable std::mutex error_mutex_;
  std::string error_, scheduling_;
  LatencyHistogram read_wait_ns_;   // per coalesced read: at most how long its first packet waited
};

}  // namespace hilrig
