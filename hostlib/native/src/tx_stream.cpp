#include <algorithm>
#include <cmath>
#include <vector>

#include "hilrig/clock.hpp"
#include "hilrig/framer.hpp"
#include "hilrig/streams.hpp"

namespace hilrig {

TxStream::TxStream(const StreamConfig& cfg) : cfg_(cfg) {
  if (cfg_.transport.kind == TransportKind::udp) {
    sock_ = UdpSocket::connect_to(cfg_.transport.host, cfg_.transport.port, cfg_.transport.socket_buffer_bytes);
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
  if (thread_.joinable()) return;
  stop_.store(false);
  thread_ = std::thread([this] { run(); });
}

void TxStream::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

static void bump(std::atomic<std::uint64_t>& a, std::uint64_t d = 1) {
  a.store(a.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
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

void TxStream::run() {
  const std::uint32_t spf = cfg_.samples_per_frame();
  const double frames_per_ns = cfg_.rate_sps / double(spf) / 1e9;
  // Token bucket with a small lead: the device FIFO starts a few frames full so that
  // scheduling jitter on the host does not starve it.
  const std::uint64_t lead = cfg_.tx_lead_frames
                                 ? cfg_.tx_lead_frames
                                 : std::clamp<std::uint64_t>(std::uint64_t(std::ceil(0.005 * cfg_.rate_sps / spf)), 4, 32);
  std::vector<std::uint8_t> buf(cfg_.frame_bytes + 64);
  const std::uint64_t t0 = now_ns();
  c_.start_ns.store(t0, std::memory_order_relaxed);
  std::uint64_t seq = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const std::uint64_t now = now_ns();
    const std::uint64_t allowed = std::uint64_t(double(now - t0) * frames_per_ns) + lead;
    if (seq >= allowed) {
      // Next frame becomes due when (t - t0) * rate / spf >= seq - lead + 1.
      std::uint64_t due = t0 + std::uint64_t(double(seq - lead + 1) / frames_per_ns);
      sleep_until_ns(std::min(due, now + 20'000'000));
      continue;
    }
    if (send_one(seq, 0, buf.data(), 50'000'000)) {
      bump(c_.frames_sent);
      bump(c_.samples_sent, spf);
      bump(c_.payload_bytes_sent, cfg_.payload_bytes());
      c_.last_send_ns.store(now_ns(), std::memory_order_relaxed);
    } else if (!stop_.load(std::memory_order_relaxed)) {
      bump(c_.send_errors);
    }
    ++seq;  // a frame that could not be sent still consumes its number (the device sees a gap)
  }
  // End of burst: one more frame flagged EOB so the device does not count an underrun.
  if (send_one(seq, kFlagEOB, buf.data(), 200'000'000)) {
    bump(c_.frames_sent);
    bump(c_.samples_sent, spf);
    bump(c_.payload_bytes_sent, cfg_.payload_bytes());
    c_.last_send_ns.store(now_ns(), std::memory_order_relaxed);
  } else {
    bump(c_.send_errors);
  }
}

nlohmann::json TxStream::stats() const {
  auto g = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  return {{"frames_sent", g(c_.frames_sent)},         {"samples_sent", g(c_.samples_sent)},
          {"payload_bytes_sent", g(c_.payload_bytes_sent)}, {"send_errors", g(c_.send_errors)},
          {"start_ns", g(c_.start_ns)},               {"last_send_ns", g(c_.last_send_ns)}};
}

}  // namespace hilrig
