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

RxStream::RxStream(const StreamConfig& cfg) : src_(cfg) {}

RxStream::~RxStream() { stop(); }

void RxStream::start() {
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (thread_.joinable()) return;
  stop_.store(false);
  thread_ = std::thread([this] { run(); });
}

void RxStream::stop() {
  stop_.store(true);
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (thread_.joinable()) {
    thread_cpu_done_ns_ += thread_cpu_ns(thread_);
    thread_.join();
  }
}

void RxStream::run() {
  RxChecker check(c_);
  FrameHeader h;
  while (!stop_.load(std::memory_order_relaxed)) {
    // Bounded so stop() is seen within 20 ms.
    if (!src_.wait(20'000'000)) {
      check.on_idle(now_ns(), kRecvTimeoutNs);
      continue;
    }
    const std::uint64_t now = now_ns();
    while (const FrameView f = src_.take()) {
      if (f.malformed) check.on_malformed();
      else check.on_frame(f.data, f.len, now, &h);
      src_.release();
    }
    check.on_batch_done(now);
  }
  src_.release_batch();
}

nlohmann::json RxStream::stats() const {
  nlohmann::json s = counters_json(c_);
  {
    std::lock_guard<std::mutex> lock(thread_mu_);
    s["thread_cpu_ns"] = thread_cpu_done_ns_ + thread_cpu_ns(const_cast<std::thread&>(thread_));
  }
  s["warnings"] = warnings();
  return s;
}

}  // namespace hilrig
