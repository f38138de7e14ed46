#include <stdexcept>
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

RxStream::RxStream(const StreamConfig& cfg) : cfg_(cfg) {
  if (cfg_.transport.kind == TransportKind::usb)
    throw std::invalid_argument("RxStream: transport usb is streamed by a UsbEngine (hostlib._native.UsbStream), not a socket or ring");
  if (cfg_.transport.kind == TransportKind::udp) {
    sock_ = UdpSocket::bind_to(cfg_.transport.host, cfg_.transport.port, cfg_.socket_buffer_for_rate());
    gro_ = gro_wanted() && sock_.enable_gro();
    busy_poll_ = cfg_.transport.busy_poll;
    if (busy_poll_) sock_.enable_busy_poll(50);
  } else if (cfg_.transport.path.empty()) {
    ring_.reset(ShmRing::create(cfg_.ring_slots_for_rate(), cfg_.frame_bytes));
  } else {
    ring_.reset(ShmRing::open(cfg_.transport.path));
  }
}

RxStream::~RxStream() { stop(); }

std::vector<std::string> RxStream::warnings() const {
  std::vector<std::string> w;
  if (!ring_ && !sock_.buffer_warning().empty()) w.push_back(sock_.buffer_warning());
  if (!ring_ && gro_wanted() && !gro_) w.push_back("udp: the kernel refused UDP_GRO; receiving one datagram per message");
  return w;
}

nlohmann::json RxStream::endpoint() const {
  if (ring_) return {{"kind", "shm"}, {"path", ring_->path()}, {"slots", ring_->slot_count()}};
  return {{"kind", "udp"},
          {"host", cfg_.transport.host},
          {"port", sock_.local_port()},
          {"socket_buffer_bytes", cfg_.transport.socket_buffer_bytes},
          {"socket_buffer_bytes_sized", cfg_.socket_buffer_for_rate()},  // grown to 50 ms of the rate
          {"socket_buffer_bytes_granted", sock_.granted_rcvbuf()},
          {"gso", cfg_.transport.gso},
          {"gro", gro_}};
}

void RxStream::start() {
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (thread_.joinable()) return;
  stop_.store(false);
  thread_ = std::thread([this] { ring_ ? run_shm() : run_udp(); });
}

void RxStream::stop() {
  stop_.store(true);
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (thread_.joinable()) {
    thread_cpu_done_ns_ += thread_cpu_ns(thread_);
    thread_.join();
  }
}

void RxStream::run_udp() {
  RxChecker check(c_);
  // Without GRO: one byte more than a whole frame so an oversized datagram shows up
  // as MSG_TRUNC. With GRO every buffer takes a 64 KiB coalesced message.
  UdpRecvBatch batch(gro_ ? 16 : 64, std::size_t(cfg_.frame_bytes) + 1, gro_);
  FrameHeader h;
  while (!stop_.load(std::memory_order_relaxed)) {
    int n = batch.recv(sock_.fd());
    std::uint64_t now = now_ns();
    if (n > 0) {
      for (int i = 0; i < n; ++i) {
        if (batch.truncated(unsigned(i))) {
          check.on_malformed();
          continue;
        }
        batch.for_each_datagram(unsigned(i), [&](const std::uint8_t* p, std::size_t len) {
          if (len > cfg_.frame_bytes) check.on_malformed();
          else check.on_frame(p, len, now, &h);
        });
      }
      check.on_batch_done(now);
      continue;
    }
    check.on_idle(now, kRecvTimeoutNs);
    if (!busy_poll_) sock_.wait_readable(20);  // bounded so stop() is seen within 20 ms
  }
}

void RxStream::run_shm() {
  RxChecker check(c_);
  FrameHeader h;
  constexpr int kBatch = 32;  // slots checked before one batched release
  while (!stop_.load(std::memory_order_relaxed)) {
    std::uint32_t len = 0;
    const std::uint8_t* p = ring_->peek_wait(&len, 20'000'000);
    std::uint64_t now = now_ns();
    if (p) {
      for (int i = 0; p && i < kBatch; ++i) {
        // Checked in place, then the slot goes back to the producer.
        if (len > ring_->slot_bytes()) check.on_malformed();
        else check.on_frame(p, len, now, &h);
        ring_->release_deferred();
        p = ring_->peek(&len);
      }
      ring_->flush_released();
      check.on_batch_done(now);
      continue;
    }
    check.on_idle(now, kRecvTimeoutNs);
  }
  ring_->flush_released();
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
