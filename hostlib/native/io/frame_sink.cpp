#include "hilrig/io/frame_sink.hpp"

#include <algorithm>
#include <stdexcept>

#include "hilrig/core/framer.hpp"

namespace hilrig {

FrameSink::FrameSink(const StreamConfig& cfg) : cfg_(cfg), pacing_(cfg.transport.pacing, cfg.frame_bytes) {
  if (cfg_.transport.kind == TransportKind::usb)
    throw std::invalid_argument("FrameSink: transport usb is streamed by a UsbEngine (hostlib._native.UsbStream), not a socket or ring");
  if (cfg_.transport.kind == TransportKind::shm) {
    if (cfg_.transport.path.empty()) throw std::invalid_argument("transport.path is empty (shm needs the receiver's ring path)");
    ring_ = std::make_unique<ShmProducer>(ShmRing::open(cfg_.transport.path, cfg_.transport.publish));
    if (ring_->slot_bytes() < cfg_.frame_bytes)
      throw std::invalid_argument("transport.path: ring slots hold " + std::to_string(ring_->slot_bytes()) +
                                  " bytes, frame_bytes is " + std::to_string(cfg_.frame_bytes));
    max_len_ = ring_->slot_bytes();
    cap_ = ~0u;
    return;
  }
  sock_ = UdpSocket::connect_to(cfg_.transport.host, cfg_.transport.port, cfg_.transport.socket_buffer_bytes);
  max_len_ = cfg_.frame_bytes;
  sender_ = UdpSender(sock_.fd(), max_len_, cfg_.transport.gso && !pacing_.active());
  // At most ~1 MiB in one batch.
  cap_ = std::clamp<unsigned>((1u << 20) / max_len_, 1, 512);
  buf_.resize(std::size_t(cap_) * max_len_ + 64);
  ptrs_.resize(cap_);
  lens_.resize(cap_);
}

std::uint8_t* FrameSink::acquire(std::uint64_t timeout_ns) {
  if (ring_) return slot_ = timeout_ns ? ring_->acquire_wait(timeout_ns) : ring_->acquire();
  return n_ < cap_ ? at(n_) : nullptr;
}

void FrameSink::commit(std::uint32_t len) {
  if (ring_) {
    finish_frame(slot_, cfg_.crc, now_ns());
    ring_->publish_deferred(len);
    ++n_;
    return;
  }
  lens_[n_] = len;
  equal_ = equal_ && len == max_len_;
  ++n_;
}

unsigned FrameSink::flush(std::uint64_t deadline_ns, const std::atomic<bool>* stop) {
  const unsigned n = n_;
  n_ = 0;
  if (ring_) {
    ring_->flush_published();
    return n;
  }
  const bool equal = std::exchange(equal_, true);
  if (pacing_.active()) {
    for (unsigned i = 0; i < n; ++i) {
      ptrs_[i] = at(i);
      finish_frame(at(i), cfg_.crc, pacing_.before_send());
      const unsigned sent = send_with_retry(sock_, 1, deadline_ns, stop, &error_, [&](unsigned, bool* busy, int* err) {
        return unsigned(udp_send_batch(sock_.fd(), ptrs_.data() + i, lens_.data() + i, 1, busy, err));
      });
      pacing_.after_send(now_ns());
      if (!sent) return i;
    }
    return n;
  }
  const std::uint64_t ts = now_ns();
  for (unsigned i = 0; i < n; ++i) finish_frame(at(i), cfg_.crc, ts);
  if (equal)
    return send_with_retry(sock_, n, deadline_ns, stop, &error_, [&](unsigned done, bool* busy, int* err) {
      return unsigned(sender_.send(at(done), n - done, busy, err));
    });
  for (unsigned i = 0; i < n; ++i) ptrs_[i] = at(i);
  return send_with_retry(sock_, n, deadline_ns, stop, &error_, [&](unsigned done, bool* busy, int* err) {
    return unsigned(udp_send_batch(sock_.fd(), ptrs_.data() + done, lens_.data() + done, n - done, busy, err));
  });
}

}  // namespace hilrig
