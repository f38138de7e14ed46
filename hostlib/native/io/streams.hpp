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
#include "hilrig/rf/capture.hpp"

namespace hilrig {

// CPU time (ns) a running std::thread has used, 0 if it is not running.
std::uint64_t thread_cpu_ns(std::thread& t);

// The thread of a host stream: start(run) runs run() on it, which polls
// stop_requested(); stop() ends and joins it (idempotent). cpu_ns() is safe to call
// while it runs (stop() joins while stats() may read its CPU clock).
class StreamThread {
 public:
  ~StreamThread() { stop(); }
  template <class Run>
  void start(Run&& run) {
    std::lock_guard<std::mutex> lock(mu_);
    if (thread_.joinable()) return;
    stop_.store(false);
    thread_ = std::thread(std::forward<Run>(run));
  }
  void stop();
  bool running() const { return thread_.joinable(); }
  bool stop_requested() const { return stop_.load(std::memory_order_relaxed); }
  const std::atomic<bool>& stop_flag() const { return stop_; }
  // CPU time of the finished threads and the running one.
  std::uint64_t cpu_ns() const;

 private:
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::uint64_t cpu_done_ns_ = 0;
  mutable std::mutex mu_;
};

// A receive wait longer than this with no frame, mid-stream, counts one timeout.
inline constexpr std::uint64_t kRecvTimeoutNs = 100'000'000;

// Checks every frame of the batch src.wait() made ready, all arrived at now_ns (RxStream,
// the USB engine): a malformed view is counted, a frame the checker refuses is
// rejected to the source (a transfer's frames after it cannot be found).
// A capture (pattern "signal") takes each accepted frame's samples.
inline void check_batch(FrameSource& src, RxChecker& check, std::uint64_t now_ns, rf::SampleCapture* capture = nullptr) {
  FrameHeader h;
  while (const FrameView f = src.take()) {
    if (f.malformed) check.on_malformed();
    else if (!check.on_frame(f.data, f.len, now_ns, &h)) src.reject();
    else if (capture) capture->on_frame(h, f.data + kFrameHeaderBytes);
    src.release();
  }
  check.on_batch_done(now_ns);
}

class RxStream {
 public:
  explicit RxStream(const StreamConfig& cfg);  // binds the socket / creates or opens the ring
  ~RxStream();
  nlohmann::json endpoint() const { return src_.endpoint(); }
  void start() { thread_.start([this] { run(); }); }
  void stop() { thread_.stop(); }  // idempotent
  nlohmann::json stats() const;
  bool running() const { return thread_.running(); }
  // Problems found while setting up (e.g. a socket buffer capped by rmem_max).
  std::vector<std::string> warnings() const { return src_.warnings(); }
  // pattern "signal": the capture (arm it where the window starts; read it once complete
  // or after stop); nullptr for the counter pattern.
  rf::SampleCapture* capture() { return capture_.get(); }

 private:
  void run();
  FrameSource src_;
  RxCounters c_;
  std::unique_ptr<rf::SampleCapture> capture_;
  bool check_pattern_;
  StreamThread thread_;
};

struct TxCounters {
  using C = std::atomic<std::uint64_t>;
  C frames_sent{0}, samples_sent{0}, payload_bytes_sent{0}, send_errors{0}, start_ns{0}, last_send_ns{0};
};

class TxStream {
 public:
  // cfg.transport is the destination (the simulator's endpoint, key "dest" in Python).
  explicit TxStream(const StreamConfig& cfg);
  ~TxStream();
  void start() { thread_.start([this] { run(); }); }
  void stop() { thread_.stop(); }  // the thread sends a last frame with EOB; joins; idempotent
  nlohmann::json stats() const;

 private:
  void run();
  // Builds and sends frames [seq, seq + n) with these flags (UDP: one GSO/sendmmsg
  // batch), waiting for room until timeout_ns; returns frames sent.
  unsigned send_batch(std::uint64_t seq, unsigned n, std::uint8_t flags, std::uint64_t timeout_ns);
  StreamConfig cfg_;
  FrameSink sink_;
  TxCounters c_;
  StreamThread thread_;
};

}  // namespace hilrig
