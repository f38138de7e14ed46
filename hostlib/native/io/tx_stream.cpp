#include <stdexcept>
#include <algorithm>
#include <cmath>
#include <vector>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/counter.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/io/streams.hpp"
#include "hilrig/core/tx_pacer.hpp"

namespace hilrig {

TxStream::TxStream(const StreamConfig& cfg) : cfg_(cfg) {
  if (cfg_.transport.kind == TransportKind::usb)
    throw std::invalid_argument("TxStream: transport usb is streamed by a UsbEngine (hostlib._native.UsbStream), not a socket or ring");
  if (cfg_.transport.kind == TransportKind::udp) {
    sock_ = UdpSocket::connect_to(cfg_.transport.host, cfg_.transport.port, cfg_.socket_buffer_for_rate());
    sender_ = UdpSender(sock_.fd(), std::uint32_t(kFrameHeaderBytes) + cfg_.payload_bytes(), cfg_.transport.gso);
  } else {
    if (cfg_.transport.path.empty()) throw std::invalid_argument("TxStream: dest.path is empty (shm needs the simulator's ring path)");
    ring_.reset(ShmRing::open(cfg_.transport.path));
    if (ring_->slot_bytes() < cfg_.frame_bytes)
      throw std::invalid_argument("TxStream: ring slots hold " + std::to_string(ring_->slot_bytes()) +
                                  " bytes, frame_bytes is " + std::to_string(cfg_.frame_bytes));
  }
}

TxStream::~TxStream() { stop(); }

void TxStream::start() {
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (thread_.joinable()) return;
  stop_.store(false);
  thread_ = std::thread([this] { run(); });
}

void TxStream::stop() {
  stop_.store(true);
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (thread_.joinable()) {
    thread_cpu_done_ns_ += thread_cpu_ns(thread_);
    thread_.join();
  }
}


// Sends one already-built frame, waiting up to timeout_ns for room. False = not sent.
bool TxStream::send_one(std::uint64_t seq, std::uint8_t flags, std::uint8_t* frame, std::uint64_t timeout_ns) {
  const std::uint64_t deadline = now_ns() + timeout_ns;
  std::uint32_t len = 0;
  if (!ring_) len = build_pattern_frame(cfg_, seq, flags, frame);
  for (;;) {
    if (ring_) {
      std::uint8_t* slot = ring_->acquire_wait(std::min<std::uint64_t>(timeout_ns, 5'000'000));
      if (slot) {
        // Written in place in the slot: no copy.
        len = build_pattern_frame(cfg_, seq, flags, slot);
        finish_frame(slot, cfg_.crc, now_ns());
        ring_->publish(len);
        return true;
      }
    } else {
      finish_frame(frame, cfg_.crc, now_ns());
      bool busy;
      int err;
      std::size_t l = len;
      if (udp_send_batch(sock_.fd(), &frame, &l, 1, &busy, &err) == 1) return true;
      if (!busy) return false;  // a real socket error: the frame is lost
      sock_.wait_writable(5);
    }
    if (now_ns() >= deadline) return false;
  }
}

unsigned TxStream::send_batch(std::uint64_t seq, unsigned n, std::uint8_t* scratch) {
  const std::uint32_t len = std::uint32_t(kFrameHeaderBytes) + cfg_.payload_bytes();
  if (ring_) {
    // Written in place in the slots (no copy), published with one store at the end.
    unsigned done = 0;
    const PatternFramer framer(cfg_);
    for (; done < n && !stop_.load(std::memory_order_relaxed); ++done) {
      std::uint8_t* slot = ring_->acquire_wait(50'000'000);
      if (!slot) break;
      framer.build(seq + done, 0, slot);
      finish_frame(slot, cfg_.crc, now_ns());
      ring_->publish_deferred(len);
    }
    ring_->flush_published();
    return done;
  }
  for (unsigned i = 0; i < n; ++i) build_pattern_frame(cfg_, seq + i, 0, scratch + std::size_t(i) * len);
  const std::uint64_t ts = now_ns();
  for (unsigned i = 0; i < n; ++i) finish_frame(scratch + std::size_t(i) * len, cfg_.crc, ts);
  const std::uint64_t deadline = ts + 50'000'000;
  unsigned sent = 0;
  while (sent < n) {
    bool busy;
    int err;
    sent += unsigned(sender_.send(scratch + std::size_t(sent) * len, n - sent, &busy, &err));
    if (sent == n || (!busy && err)) break;  // a real socket error: the rest is lost
    if (now_ns() >= deadline || stop_.load(std::memory_order_relaxed)) break;
    sock_.wait_writable(5);
  }
  return sent;
}

void TxStream::run() {
  const std::uint32_t spf = cfg_.samples_per_frame();
  const std::uint32_t len = std::uint32_t(kFrameHeaderBytes) + cfg_.payload_bytes();
  // Frames that are due leave in one batch (one GSO/sendmmsg call or one ring
  // publish), at most ~1 MiB at a time.
  TxPacer pacer(cfg_.rate_sps / double(spf),
                TxPacer::lead_frames(cfg_, TxPacer::link_frames(cfg_, ring_ ? ring_->slot_count() : 0)));
  const unsigned max_batch = std::clamp<unsigned>((1u << 20) / len, 1, 512);
  std::vector<std::uint8_t> buf(ring_ ? cfg_.frame_bytes + 64 : std::size_t(max_batch) * len + 64);
  const std::uint64_t t0 = now_ns();
  pacer.start(t0);
  c_.start_ns.store(t0, std::memory_order_relaxed);
  std::uint64_t seq = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const std::uint64_t now = now_ns();
    const std::uint64_t allowed = pacer.allowed(now);
    if (seq >= allowed) {
      sleep_until_ns(std::min(pacer.due_ns(seq), now + 20'000'000));
      continue;
    }
    const unsigned n = unsigned(std::min<std::uint64_t>(allowed - seq, max_batch));
    const unsigned sent = send_batch(seq, n, buf.data());
    if (sent) {
      counter_add(c_.frames_sent, sent);
      counter_add(c_.samples_sent, std::uint64_t(sent) * spf);
      counter_add(c_.payload_bytes_sent, std::uint64_t(sent) * cfg_.payload_bytes());
      c_.last_send_ns.store(now_ns(), std::memory_order_relaxed);
    }
    if (sent < n && !stop_.load(std::memory_order_relaxed)) counter_add(c_.send_errors, n - sent);
    // Frames that could not be sent still consume their numbers (the device sees a gap).
    seq += (sent < n && stop_.load(std::memory_order_relaxed)) ? sent : n;
  }
  // End of burst: one more frame flagged EOB so the device does not count an underrun.
  if (send_one(seq, kFlagEOB, buf.data(), 200'000'000)) {
    counter_add(c_.frames_sent);
    counter_add(c_.samples_sent, spf);
    counter_add(c_.payload_bytes_sent, cfg_.payload_bytes());
    c_.last_send_ns.store(now_ns(), std::memory_order_relaxed);
  } else {
    counter_add(c_.send_errors);
  }
}

nlohmann::json TxStream::stats() const {
  auto g = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  std::uint64_t cpu_ns;
  {
    std::lock_guard<std::mutex> lock(thread_mu_);
    cpu_ns = thread_cpu_done_ns_ + thread_cpu_ns(const_cast<std::thread&>(thread_));
  }
  return {{"frames_sent", g(c_.frames_sent)},         {"samples_sent", g(c_.samples_sent)},
          {"payload_bytes_sent", g(c_.payload_bytes_sent)}, {"send_errors", g(c_.send_errors)},
          {"start_ns", g(c_.start_ns)},               {"last_send_ns", g(c_.last_send_ns)},
          {"thread_cpu_ns", cpu_ns},
          {"gso", sender_.gso_active()},
          {"warnings", sock_.buffer_warning().empty() ? nlohmann::json::array() : nlohmann::json::array({sock_.buffer_warning()})}};
}

}  // namespace hilrig
