#include "hilrig/io/frame_sink.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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
  if (cfg_.transport.kind == TransportKind::tcp) {
    const TransportSpec& t = cfg_.transport;
    tcp_ = TcpSocket::connect_to(t.host, t.port, t.socket_buffer_bytes, t.congestion, t.nodelay,
                                 now_ns() + defaults::kTcpConnectTimeoutNs);
    max_len_ = cfg_.frame_bytes;
    // One batch: ~1 MiB, or write_bytes when a larger write was asked for.
    const std::size_t batch_bytes = std::max<std::size_t>(1u << 20, t.write_bytes);
    cap_ = unsigned(std::clamp<std::size_t>(batch_bytes / max_len_, 1, 4096));
    buf_.resize(std::size_t(cap_) * max_len_);
    lens_.resize(cap_);
    offs_.resize(cap_);
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
  if (tcp_.valid()) return n_ < cap_ ? buf_.data() + fill_ : nullptr;
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
  if (tcp_.valid()) {
    offs_[n_] = fill_;
    lens_[n_] = len;
    fill_ += len;
    ++n_;
    return;
  }
  lens_[n_] = len;
  equal_ = equal_ && len == max_len_;
  ++n_;
}

unsigned FrameSink::flush(std::uint64_t deadline_ns, const std::atomic<bool>* stop) {
  if (tcp_.valid()) {
    const unsigned sent = write_tcp(deadline_ns, stop, true);
    drop_pending(n_);  // frames not begun by the deadline are lost
    return sent;
  }
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

unsigned FrameSink::send_some(std::uint64_t deadline_ns) { return tcp_.valid() ? write_tcp(deadline_ns, nullptr, false) : 0; }

unsigned FrameSink::drop_pending(unsigned k) {
  if (!tcp_.valid()) return 0;
  const unsigned begun = head_sent_ ? 1 : 0;  // a frame begun goes on whole, never dropped
  k = std::min(k, n_ - begun);
  if (k == 0) return 0;
  const std::size_t to = offs_[begun], from = begun + k < n_ ? offs_[begun + k] : fill_;
  std::memmove(buf_.data() + to, buf_.data() + from, fill_ - from);
  for (unsigned i = begun + k; i < n_; ++i) {
    offs_[i - k] = offs_[i] - (from - to);
    lens_[i - k] = lens_[i];
  }
  n_ -= k;
  fill_ -= from - to;
  stamped_ = stamped_ <= begun ? stamped_ : stamped_ >= begun + k ? stamped_ - k : begun;
  return k;
}

unsigned FrameSink::write_tcp(std::uint64_t deadline_ns, const std::atomic<bool>* stop, bool finish_begun) {
  if (n_ == 0) return 0;
  // How long a frame begun may wait for room beyond the deadline before the connection
  // counts as broken (flush only: send_some leaves it begun for the next call).
  constexpr std::uint64_t kFinishFrameNs = 10'000'000'000;
  const std::uint64_t ts = now_ns();
  for (unsigned i = stamped_; i < n_; ++i) finish_frame(buf_.data() + offs_[i], cfg_.crc, ts);
  stamped_ = n_;
  const std::size_t chunk = cfg_.transport.write_bytes ? cfg_.transport.write_bytes : fill_;
  std::size_t done = head_sent_;  // bytes of the buffer written
  unsigned whole = 0;             // frames written whole
  error_ = 0;
  while (done < fill_) {
    const ssize_t r = ::send(tcp_.fd(), buf_.data() + done, std::min(chunk, fill_ - done), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r > 0) {
      done += std::size_t(r);
      while (whole < n_ && offs_[whole] + lens_[whole] <= done) ++whole;
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const bool mid_frame = whole < n_ && done > offs_[whole];
      const std::uint64_t now = now_ns();
      const bool due = now >= deadline_ns || (stop && stop->load(std::memory_order_relaxed));
      if (due && !(mid_frame && finish_begun)) break;
      if (due && now - std::min(now, std::max(deadline_ns, ts)) >= kFinishFrameNs) {
        error_ = ETIMEDOUT;
        break;
      }
      tcp_.wait_writable(1);
      continue;
    }
    error_ = r < 0 ? errno : EPIPE;
    break;
  }
  if (error_) {  // the connection is broken: nothing more can go over it, framed
    n_ = stamped_ = 0;
    fill_ = head_sent_ = 0;
    return whole;
  }
  // Frames written whole leave the buffer; the next one may be begun.
  const std::size_t from = whole < n_ ? offs_[whole] : fill_;
  std::memmove(buf_.data(), buf_.data() + from, fill_ - from);
  for (unsigned i = whole; i < n_; ++i) {
    offs_[i - whole] = offs_[i] - from;
    lens_[i - whole] = lens_[i];
  }
  n_ -= whole;
  fill_ -= from;
  stamped_ -= whole;
  head_sent_ = done - from;
  return whole;
}

}  // namespace hilrig
