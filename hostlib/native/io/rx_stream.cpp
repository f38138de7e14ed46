#include <pthread.h>
#include <time.h>

#include "hilrig/core/clock.hpp"
#include "hilrig/io/streams.hpp"

namespace hilrig {

std::uint64_t thread_cpu_ns(std::thread& t) {
  if (!t.joinable()) return 0;
  clockid_t cid;
  timespec ts{};
  if (pthread_getcpuclockid(t.native_handle(), &cid) != 0 || clock_gettime(cid, &ts) != 0) return 0;
  return std::uint64_t(ts.tv_sec) * 1'000'000'000ull + std::uint64_t(ts.tv_nsec);
}

void StreamThread::stop() {
  stop_.store(true);
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) {
    cpu_done_ns_ += thread_cpu_ns(thread_);
    thread_.join();
  }
}

std::uint64_t StreamThread::cpu_ns() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cpu_done_ns_ + thread_cpu_ns(const_cast<std::thread&>(thread_));
}

RxStream::RxStream(const StreamConfig& cfg)
    : src_(cfg),
      capture_(cfg.pattern == "signal"
                   ? std::make_unique<rf::SampleCapture>(cfg.signal.capture_samples, cfg.sample_format, cfg.channels)
                   : nullptr),
      check_pattern_(cfg.pattern == "counter") {}

RxStream::~RxStream() { stop(); }

void RxStream::run() {
  RxChecker check(c_, 1u << 16, check_pattern_);
  while (!thread_.stop_requested()) {
    // Bounded so stop() is seen within 20 ms.
    if (!src_.wait(20'000'000)) {
      check.on_idle(now_ns(), kRecvTimeoutNs);
      continue;
    }
    check_batch(src_, check, now_ns(), capture_.get());
  }
  src_.release_batch();
}

nlohmann::json RxStream::stats() const {
  nlohmann::json s = counters_json(c_);
  if (!check_pattern_) s["pattern_errors"] = nullptr;  // not the counter pattern: not measured
  s["thread_cpu_ns"] = thread_.cpu_ns();
  s["warnings"] = warnings();
  if (src_.kind() == TransportKind::tcp) s["tcp"] = src_.tcp_info();  // the receiving end's view
  return s;
}

}  // namespace hilrig
