// Host-side streams: RxStream (a FrameSource and the checker) and TxStream (paced
// pattern frames into a FrameSink), each on its own thread; stats() is safe to call
// while running.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/core/config.hpp"
#include "hilrig/core/rx_check.hpp"
#include "hilrig/io/frame_sink.hpp"
#include "hilrig/io/frame_source.hpp"

namespace hilrig {

// A receive wait longer than this with no frame, mid-stream, counts one timeout.
inline constexpr std::uint64_t kRecvTimeoutNs = 100'000'000;

class RxStream {
 public:
  explicit RxStream(const StreamConfig& cfg);  // binds the socket / creates or opens the ring
  ~RxStream();
  nlohmann::json endpoint() const { return src_.endpoint(); }
  void start();
  void stop();  // idempotent
  nlohmann::json stats() const;
  bool running() const { return thread_.joinable(); }
  // Problems found while setting up (e.g. a socket buffer capped by rmem_max).
  std::vector<std::string> warnings() const { return src_.warnings(); }

 private:
  void run();
  FrameSource src_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  RxCounters c_;
  std::string error_;
  std::uint64_t thread_cpu_done_ns_ = 0;  // CPU time of finished receive threads
  mutable std::mutex thread_mu_;           // stop() joins thread_ while stats() may read its CPU clock
};

// CPU time (ns) a running std::thread has used, 0 if it is not running.
std::uint64_t thread_cpu_ns(std::thread& t);

struct TxCounters {
  using C = std::atomic<std::uint64_t>;
  C frames_sent{0}, samples_sent{0}, payload_bytes_sent{0}, send_errors{0}, start_ns{0}, last_send_ns{0};
};

class TxStream {
 public:
  // cfg.transport is the destination (the simulator's endpoint, key "dest" in Python).
  explicit TxStream(const StreamConfig& cfg);
  ~TxStream();
  void start();
  void stop();  // sends a last frame with EOB, joins; idempotent
  nlohmann::json stats() const;

 private:
  void run();
  // Builds and sends frames [seq, seq + n) with these flags (UDP: one GSO/sendmmsg
  // batch), waiting for room until timeout_ns; returns frames sent.
  unsigned send_batch(std::uint64_t seq, unsigned n, std::uint8_t flags, std::uint64_t timeout_ns);
  StreamConfig cfg_;
  FrameSink sink_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  TxCounters c_;
  std::uint64_t thread_cpu_done_ns_ = 0;
  mutable std::mutex thread_mu_;  // stop() joins thread_ while stats() may read its CPU clock
};

}  // namespace hilrig
