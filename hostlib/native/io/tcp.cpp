#include "hilrig/io/tcp.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/frame.hpp"
#include "hilrig/io/udp.hpp"

namespace hilrig {
namespace {
std::string endpoint_name(const std::string& host, std::uint16_t port) { return host + ":" + std::to_string(port); }

std::string read_line(const char* path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line.empty() ? "(unreadable)" : line;
}

void set_congestion(int fd, const std::string& name) {
  if (name.empty()) return;
  if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(), socklen_t(name.size())) == 0) return;
  const int err = errno;
  throw std::invalid_argument("tcp: the kernel refused congestion control \"" + name + "\" (" + std::strerror(err) +
                              "); allowed here: " + read_line("/proc/sys/net/ipv4/tcp_allowed_congestion_control") +
                              " (/proc/sys/net/ipv4/tcp_allowed_congestion_control; root may also use those in "
                              "/proc/sys/net/ipv4/tcp_available_congestion_control: " +
                              read_line("/proc/sys/net/ipv4/tcp_available_congestion_control") + ")");
}

bool wait_fd(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  return ::poll(&p, 1, timeout_ms) > 0 && (p.revents & (events | POLLERR | POLLHUP));
}
}  // namespace

nlohmann::json to_json(const TcpInfo& i) {
  return {{"connected", i.connected},       {"retransmits", i.retransmits},   {"rtt_ns", i.rtt_ns},
          {"rttvar_ns", i.rttvar_ns},       {"cwnd_segments", i.cwnd_segments}, {"sndbuf_bytes", i.sndbuf_bytes},
          {"rcvbuf_bytes", i.rcvbuf_bytes}, {"congestion", i.congestion}};
}

TcpSocket::~TcpSocket() {
  if (fd_ >= 0) ::close(fd_);
}
TcpSocket::TcpSocket(TcpSocket&& o) noexcept : fd_(o.fd_), buffer_warning_(std::move(o.buffer_warning_)) { o.fd_ = -1; }
TcpSocket& TcpSocket::operator=(TcpSocket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    buffer_warning_ = std::move(o.buffer_warning_);
    o.fd_ = -1;
  }
  return *this;
}

TcpSocket TcpSocket::listen_on(const std::string& host, std::uint16_t port, std::uint32_t rcvbuf_bytes) {
  const sockaddr_in a = ipv4_address(host, port, "tcp listen");
  TcpSocket s;
  s.fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s.fd_ < 0) throw std::runtime_error(std::string("tcp: socket() failed: ") + std::strerror(errno));
  int one = 1;
  setsockopt(s.fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  s.buffer_warning_ = set_socket_buffer(s.fd_, true, rcvbuf_bytes, "tcp");
  if (::bind(s.fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 || ::listen(s.fd_, 4) != 0)
    throw std::runtime_error("tcp: listen on " + endpoint_name(host, port) + " failed: " + std::strerror(errno));
  return s;
}

TcpSocket TcpSocket::accept_one() const {
  TcpSocket c;
  c.fd_ = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  return c;
}

TcpSocket TcpSocket::connect_to(const std::string& host, std::uint16_t port, std::uint32_t sndbuf_bytes,
                                const std::string& congestion, bool nodelay, std::uint64_t deadline_ns) {
  if (port == 0) throw std::runtime_error("tcp: destination " + endpoint_name(host, port) + " has no port");
  const sockaddr_in a = ipv4_address(host, port, "tcp connect");
  const std::uint64_t start = now_ns();
  for (;;) {
    TcpSocket s;
    s.fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s.fd_ < 0) throw std::runtime_error(std::string("tcp: socket() failed: ") + std::strerror(errno));
    s.buffer_warning_ = set_socket_buffer(s.fd_, false, sndbuf_bytes, "tcp");
    set_congestion(s.fd_, congestion);
    if (nodelay) {
      int one = 1;
      setsockopt(s.fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    int err = 0;
    if (::connect(s.fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) return s;
    err = errno;
    if (err == EINPROGRESS) {
      const std::uint64_t now = now_ns();
      const int wait_ms = now < deadline_ns ? int(std::min<std::uint64_t>((deadline_ns - now) / 1'000'000 + 1, 1000)) : 1;
      if (wait_fd(s.fd_, POLLOUT, wait_ms)) {
        socklen_t l = sizeof err;
        getsockopt(s.fd_, SOL_SOCKET, SO_ERROR, &err, &l);
        if (err == 0) return s;
      } else {
        err = ETIMEDOUT;
      }
    }
    if (now_ns() >= deadline_ns)
      throw std::runtime_error("tcp: connect to " + endpoint_name(host, port) + " failed for " +
                               std::to_string((now_ns() - start) / 1'000'000) + " ms: " + std::strerror(err) +
                               " (is the receiver listening there?)");
    sleep_for_ns(10'000'000);  // nothing listens yet: the receiver may still be opening
  }
}

std::uint16_t TcpSocket::local_port() const {
  sockaddr_in a{};
  socklen_t l = sizeof a;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &l);
  return ntohs(a.sin_port);
}

TcpInfo TcpSocket::info() const {
  TcpInfo i;
  if (fd_ < 0) return i;
  tcp_info t{};
  socklen_t l = sizeof t;
  if (getsockopt(fd_, IPPROTO_TCP, TCP_INFO, &t, &l) == 0) {
    i.connected = t.tcpi_state == TCP_ESTABLISHED || t.tcpi_state == TCP_CLOSE_WAIT;
    i.retransmits = t.tcpi_total_retrans;
    i.rtt_ns = std::uint64_t(t.tcpi_rtt) * 1000;
    i.rttvar_ns = std::uint64_t(t.tcpi_rttvar) * 1000;
    i.cwnd_segments = t.tcpi_snd_cwnd;
  }
  char name[16] = {};
  l = sizeof name - 1;
  if (getsockopt(fd_, IPPROTO_TCP, TCP_CONGESTION, name, &l) == 0) i.congestion = std::string(name, strnlen(name, l));
  i.sndbuf_bytes = socket_buffer_granted(fd_, false);
  i.rcvbuf_bytes = socket_buffer_granted(fd_, true);
  return i;
}

bool TcpSocket::wait_readable(int timeout_ms) const { return wait_fd(fd_, POLLIN, timeout_ms); }
bool TcpSocket::wait_writable(int timeout_ms) const { return wait_fd(fd_, POLLOUT, timeout_ms); }

// ---------------------------------------------------------------- FrameReassembler

// Reads of up to ~1 MiB (at least 4 frames), plus room for one partial frame in front.
FrameReassembler::FrameReassembler(std::uint32_t max_frame_bytes)
    : max_len_(max_frame_bytes), buf_(std::max<std::size_t>(1u << 20, 4ull * max_frame_bytes) + max_frame_bytes) {}

std::uint8_t* FrameReassembler::space(std::size_t* room) {
  if (lost_) head_ = tail_ = 0;  // the rest of the stream cannot be framed: read and discard it
  if (head_ > 0) {
    std::memmove(buf_.data(), buf_.data() + head_, tail_ - head_);
    tail_ -= head_;
    head_ = 0;
  }
  *room = buf_.size() - tail_;
  return buf_.data() + tail_;
}

bool FrameReassembler::ready() const {
  const std::size_t n = buffered();
  if (lost_) return false;
  if (cut_) return n > 0;
  if (n < kFrameHeaderBytes) return false;
  const std::uint8_t* p = buf_.data() + head_;
  const std::uint64_t len = kFrameHeaderBytes + std::uint64_t(frame_payload_bytes(p));
  return frame_load<std::uint16_t>(p, offsetof(FrameHeader, magic)) != kFrameMagic || len > max_len_ || n >= len;
}

FrameView FrameReassembler::take() {
  const std::size_t n = buffered();
  const std::uint8_t* p = buf_.data() + head_;
  if (lost_ || n == 0) return {};
  if (cut_) {  // the stream ended inside this frame
    head_ = tail_;
    cut_ = false;
    return {p, std::uint32_t(std::min<std::size_t>(n, 0xffffffffu)), true};
  }
  if (n < kFrameHeaderBytes) return {};
  const std::uint64_t len = kFrameHeaderBytes + std::uint64_t(frame_payload_bytes(p));
  if (frame_load<std::uint16_t>(p, offsetof(FrameHeader, magic)) != kFrameMagic || len > max_len_) {
    lost_ = true;
    head_ = tail_;
    return {p, std::uint32_t(std::min<std::size_t>(n, 0xffffffffu)), true};
  }
  if (n < len) return {};
  head_ += len;
  return {p, std::uint32_t(len), false};
}

std::pair<std::size_t, std::size_t> FrameReassembler::cut() {
  const std::size_t n = buffered();
  if (n == 0 || lost_) return {0, 0};
  const std::uint8_t* p = buf_.data() + head_;
  const std::size_t expected = n >= kFrameHeaderBytes ? kFrameHeaderBytes + frame_payload_bytes(p) : kFrameHeaderBytes;
  cut_ = true;
  return {n, expected};
}

}  // namespace hilrig
