#include "hilrig/io/frame_source.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/frame.hpp"

namespace hilrig {

FrameSource::FrameSource(const StreamConfig& cfg) : cfg_(cfg) {
  if (cfg_.transport.kind == TransportKind::usb)
    throw std::invalid_argument("FrameSource: transport usb is read from a UsbEngine's IN transfers (hostlib._native.UsbStream), not a socket or ring");
  if (cfg_.transport.kind == TransportKind::udp) {
    sock_ = UdpSocket::bind_to(cfg_.transport.host, cfg_.transport.port, cfg_.transport.socket_buffer_bytes);
    gro_ = gro_wanted() && sock_.enable_gro();
    busy_poll_ = cfg_.transport.busy_poll;
    if (busy_poll_) sock_.enable_busy_poll(50);
    // Without GRO: one byte more than a whole frame so an oversized datagram shows up
    // as MSG_TRUNC. With GRO every buffer takes a 64 KiB coalesced message.
    batch_ = std::make_unique<UdpRecvBatch>(gro_ ? 16 : 64, std::size_t(cfg_.frame_bytes) + 1, gro_);
    max_len_ = cfg_.frame_bytes;
    return;
  }
  if (cfg_.transport.kind == TransportKind::tcp) {
    listener_ = TcpSocket::listen_on(cfg_.transport.host, cfg_.transport.port, cfg_.transport.socket_buffer_bytes);
    max_len_ = cfg_.frame_bytes;
    reasm_ = std::make_unique<FrameReassembler>(max_len_);
    return;
  }
  if (cfg_.transport.path.empty()) {
    ring_ = std::make_unique<ShmConsumer>(ShmRing::create(cfg_.transport.slots, cfg_.frame_bytes, cfg_.transport.publish));
  } else {
    ring_ = std::make_unique<ShmConsumer>(ShmRing::open(cfg_.transport.path, cfg_.transport.publish));
  }
  max_len_ = ring_->slot_bytes();
}

FrameSource::FrameSource(TransferFeed& feed, std::uint32_t max_frame_bytes) : feed_(&feed), max_len_(max_frame_bytes) {
  cfg_.transport.kind = TransportKind::usb;
}

bool FrameSource::gro_wanted() const { return cfg_.transport.gro && udp_offload_pays(cfg_.frame_bytes); }

std::vector<std::string> FrameSource::warnings() const {
  std::vector<std::string> w;
  if (reasm_) {
    if (!listener_.buffer_warning().empty()) w.push_back(listener_.buffer_warning());
    std::lock_guard<std::mutex> lock(tcp_mu_);
    if (!tcp_error_.empty()) w.push_back(tcp_error_);
    return w;
  }
  if (ring_ || feed_) return w;
  if (!sock_.buffer_warning().empty()) w.push_back(sock_.buffer_warning());
  if (gro_wanted() && !gro_) w.push_back("udp: the kernel refused UDP_GRO; receiving one datagram per message");
  return w;
}

nlohmann::json FrameSource::endpoint() const {
  if (ring_) return {{"kind", "shm"}, {"path", ring_->ring().path()}, {"slots", ring_->ring().slot_count()},
                     {"publish", ring_publish_name(ring_->ring().publish())}};
  if (feed_) return {{"kind", "usb"}};
  if (reasm_)
    return {{"kind", "tcp"},
            {"host", cfg_.transport.host},
            {"port", listener_.local_port()},
            {"socket_buffer_bytes", cfg_.transport.socket_buffer_bytes},
            {"socket_buffer_bytes_granted", socket_buffer_granted(listener_.fd(), true)}};
  return {{"kind", "udp"},
          {"host", cfg_.transport.host},
          {"port", sock_.local_port()},
          {"socket_buffer_bytes", cfg_.transport.socket_buffer_bytes},
          {"socket_buffer_bytes_granted", sock_.granted_rcvbuf()},
          {"gso", cfg_.transport.gso},
          {"gro", gro_}};
}

nlohmann::json FrameSource::tcp_info() const {
  if (!reasm_) return nullptr;
  std::lock_guard<std::mutex> lock(tcp_mu_);
  return to_json(conn_.info());
}

bool FrameSource::wait_tcp(std::uint64_t timeout_ns) {
  if (reasm_->ready()) return true;  // frames of the last read are left
  const std::uint64_t deadline = now_ns() + timeout_ns;
  auto wait_ms = [&] {
    const std::uint64_t now = now_ns();
    return now >= deadline ? -1 : int(std::min<std::uint64_t>((deadline - now + 999'999) / 1'000'000, 1000));
  };
  for (;;) {
    if (!conn_.valid() || conn_ended_) {  // a sender connects (again, after a stream ended)
      TcpSocket c = listener_.accept_one();
      if (!c.valid()) {
        const int ms = wait_ms();
        if (ms < 0) return false;
        listener_.wait_readable(ms);
        continue;
      }
      std::lock_guard<std::mutex> lock(tcp_mu_);
      conn_ = std::move(c);
      conn_ended_ = false;
      reasm_->reset();
    }
    std::size_t room = 0;
    std::uint8_t* p = reasm_->space(&room);
    const ssize_t n = ::recv(conn_.fd(), p, room, MSG_DONTWAIT);
    if (n > 0) {
      reasm_->filled(std::size_t(n));
      if (reasm_->ready()) return true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const int ms = wait_ms();
      if (ms < 0) return false;
      conn_.wait_readable(ms);
      continue;
    }
    // The sender closed the connection (EOF: the end of its stream) or it broke.
    const int err = n < 0 ? errno : 0;
    conn_ended_ = true;
    const auto [have, expected] = reasm_->cut();
    if (have || err) {
      std::lock_guard<std::mutex> lock(tcp_mu_);
      tcp_error_ = "tcp: the connection from the sender " + std::string(err ? std::strerror(err) : "closed") +
                   (have ? " inside a frame (" + std::to_string(have) + " of its " + std::to_string(expected) +
                               " bytes arrived)"
                         : std::string());
    }
    if (have) return true;  // the cut frame, malformed
    if (err) {
      error_ = err;
      return false;
    }
  }
}

void FrameSource::next_message() {
  ++msg_;
  off_ = 0;
  if (msg_ < msgs_) seg_ = batch_->segment(msg_);
  if (seg_ == 0) seg_ = 1;  // a zero-length datagram: nothing to take
}

FrameView FrameSource::take_transfer() {
  if (xfer_off_ >= xfer_bytes_) return {};
  const std::uint8_t* p = xfer_ + xfer_off_;
  const std::uint32_t left = xfer_bytes_ - xfer_off_;
  const std::uint64_t len = kFrameHeaderBytes + (left >= kFrameHeaderBytes ? frame_payload_bytes(p) : 0);
  if (left < kFrameHeaderBytes || len > left) {  // the device ended the transfer inside this frame
    xfer_off_ = xfer_bytes_;
    feed_->on_short_transfer();
    return {p, left, true};
  }
  if (len > max_len_) {  // not a frame of this stream: where the next one starts is unknown
    xfer_off_ = xfer_bytes_;
    return {p, left, true};
  }
  xfer_off_ += std::uint32_t(len);
  return {p, std::uint32_t(len), false};
}

void FrameSource::release_transfer() {
  if (!xfer_held_) return;
  xfer_held_ = false;
  xfer_ = nullptr;
  xfer_bytes_ = xfer_off_ = 0;
  feed_->release_transfer();
}

bool FrameSource::wait(std::uint64_t timeout_ns) {
  if (reasm_) return wait_tcp(timeout_ns);
  if (feed_) {
    if (xfer_off_ < xfer_bytes_) return true;  // frames of the last transfer are left
    release_transfer();
    TransferFeed::Transfer t;
    if (!feed_->next_transfer(timeout_ns, &t)) return false;
    xfer_ = t.data;
    xfer_bytes_ = t.bytes;
    xfer_held_ = true;
    return true;
  }
  if (ring_) {
    ring_->flush_released();  // the producer may be waiting for exactly these slots
    taken_ = 0;
    std::uint32_t len = 0;
    return (timeout_ns ? ring_->peek_wait(&len, timeout_ns) : ring_->peek(&len)) != nullptr;
  }
  if (msg_ < msgs_) return true;  // the last batch is not used up: nothing is lost
  msg_ = msgs_ = 0;
  const std::uint64_t deadline = now_ns() + timeout_ns;
  for (;;) {
    const int n = batch_->recv(sock_.fd());
    if (n > 0) {
      msgs_ = unsigned(n);
      msg_ = ~0u;  // next_message() makes it 0
      next_message();
      return true;
    }
    if (n < 0) {
      error_ = errno;
      return false;
    }
    const std::uint64_t now = now_ns();
    if (now >= deadline || busy_poll_) return false;  // busy poll: the caller spins
    sock_.wait_readable(int(std::min<std::uint64_t>((deadline - now + 999'999) / 1'000'000, 1000)));
  }
}

}  // namespace hilrig
