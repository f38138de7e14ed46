// One direction of hilrig-link: a thread that reads packets from one fd (a TUN device),
// schedules them with a LinkModel in real time (CLOCK_MONOTONIC) and writes each to the
// other fd when it falls due. It sleeps until shortly before the next due time and
// spins for the last TxPacer::kSpinNs (a sleep wakes ~50 us late at best).
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "hilrig/core/counter.hpp"
#include "hilrig/link/link_model.hpp"

namespace hilrig {

class LinkPump {
 public:
  // fd_in, fd_out: non-blocking packet fds, owned by the caller and open while this runs.
  LinkPump(int fd_in, int fd_out, const LinkSpec& spec);
  ~LinkPump() { stop(); }
  LinkPump(const LinkPump&) = delete;
  LinkPump& operator=(const LinkPump&) = delete;

  void start();
  void stop();   // joins; packets still in flight are counted in_flight, never written
  // The model's counters and histograms, in_flight, write_errors and the thread's error.
  nlohmann::json stats() const;

 private:
  void run();
  int in_, out_;
  LinkModel model_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  Counter in_flight_{0}, write_errors_{0};
  mutable std::mutex error_mutex_;
  std::string error_;
};

}  // namespace hilrig
