// Host-side streams: RxStream (receiver + checker) and TxStream (paced pattern sender),
// each on its own thread; stats() is safe to call while running.
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
#include "hilrig/io/shm_ring.hpp"
#include "hilrig/io/udp.hpp"

namespace hilrig {

// A receive wait longer than this with no frame, mid-stream, counts one timeout.
inline constexpr std::uint64_t kRecvTimeoutNs = 100'000'000;

class RxStream {
 public:
  explicit RxStream(const StreamConfig& cfg);  // binds the socket / creates or opens the ring
  ~RxStream();
  nlohmann::json endpoint() const;
  void start();
  void stop();  // idempotent
  nlohmann::json stats() const;
  bool running() const { return thread_.joinable(); }
  // Problems found while setting up (e.g. a socket buffer capped by rmem_max).
  std::vector<std::string> warnings() const;

 private:
  void run_udp();
  void run_shm();
  // GRO asked for and worth it at this frame size (udp_offload_pays).
  bool gro_wanted() const { return cfg_.transport.gro && udp_offload_pays(cfg_.frame_bytes); }
  StreamConfig cfg_;
  UdpSocket sock_;
  bool gro_ = false, busy_poll_ = false;
  std::unique_ptr<ShmRing> ring_;
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
  bool send_one(std::uint64_t seq, std::uint8_t flags, std::uint8_t* scratch, std::uint64_t timeout_ns);
  // Builds and sends frames [seq, seq + n) (UDP: one GSO/sendmmsg batch); returns frames sent.
  unsigned send_batch(std::uint64_t seq, unsigned n, std::uint8_t* scratch);
  StreamConfig cfg_;
  UdpSocket sock_;
  UdpSender sender_;
  std::unique_ptr<ShmRing> ring_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  TxCounters c_;
  std::uint64_t thread_cpu_done_ns_ = 0;
  mutable std::mutex thread_mu_;  // stop() joins thread_ while stats() may read its CPU clock
};

}  // namespace hilrig
