#include "hilrig/udp.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hilrig {
namespace {
sockaddr_in make_addr(const std::string& host, std::uint16_t port, const char* what) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    throw std::runtime_error(std::string("udp ") + what + ": host '" + host + "' is not an IPv4 address");
  return a;
}
int make_socket() {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw std::runtime_error(std::string("udp: socket() failed: ") + std::strerror(errno));
  return fd;
}
std::uint32_t getbuf(int fd, int opt) {
  int v = 0;
  socklen_t l = sizeof v;
  getsockopt(fd, SOL_SOCKET, opt, &v, &l);
  return std::uint32_t(v);
}
}  // namespace

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) ::close(fd_);
}
UdpSocket::UdpSocket(UdpSocket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
UdpSocket& UdpSocket::operator=(UdpSocket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

UdpSocket UdpSocket::bind_to(const std::string& host, std::uint16_t port, std::uint32_t rcvbuf_bytes) {
  UdpSocket s;
  s.fd_ = make_socket();
  if (rcvbuf_bytes) {
    int v = int(rcvbuf_bytes);
    setsockopt(s.fd_, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
  }
  sockaddr_in a = make_addr(host, port, "bind");
  if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw std::runtime_error("udp: bind to " + host + ":" + std::to_string(port) + " failed: " + std::strerror(errno));
  return s;
}

UdpSocket UdpSocket::connect_to(const std::string& host, std::uint16_t port, std::uint32_t sndbuf_bytes) {
  UdpSocket s;
  s.fd_ = make_socket();
  if (sndbuf_bytes) {
    int v = int(sndbuf_bytes);
    setsockopt(s.fd_, SOL_SOCKET, SO_SNDBUF, &v, sizeof v);
  }
  if (port == 0) throw std::runtime_error("udp: destination " + host + ":0 has no port");
  sockaddr_in a = make_addr(host, port, "connect");
  if (::connect(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw std::runtime_error("udp: connect to " + host + ":" + std::to_string(port) + " failed: " + std::strerror(errno));
  return s;
}

std::uint16_t UdpSocket::local_port() const {
  sockaddr_in a{};
  socklen_t l = sizeof a;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &l);
  return ntohs(a.sin_port);
}
std::uint32_t UdpSocket::granted_rcvbuf() const { return getbuf(fd_, SO_RCVBUF); }
std::uint32_t UdpSocket::granted_sndbuf() const { return getbuf(fd_, SO_SNDBUF); }

bool UdpSocket::wait_readable(int timeout_ms) const {
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) > 0 && (p.revents & POLLIN);
}
bool UdpSocket::wait_writable(int timeout_ms) const {
  pollfd p{fd_, POLLOUT, 0};
  return ::poll(&p, 1, timeout_ms) > 0 && (p.revents & POLLOUT);
}

UdpRecvBatch::UdpRecvBatch(unsigned batch, std::size_t max_datagram_bytes)
    : max_(max_datagram_bytes), bufs_(batch * max_datagram_bytes), iov_(batch), msgs_(batch) {}

int UdpRecvBatch::recv(int fd) {
  for (std::size_t i = 0; i < msgs_.size(); ++i) {
    iov_[i] = iovec{bufs_.data() + i * max_, max_};
    msgs_[i] = mmsghdr{};
    msgs_[i].msg_hdr.msg_iov = &iov_[i];
    msgs_[i].msg_hdr.msg_iovlen = 1;
  }
  int n = recvmmsg(fd, msgs_.data(), unsigned(msgs_.size()), MSG_DONTWAIT, nullptr);
  if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
  return n;
}

int udp_send_batch(int fd, std::uint8_t* const* buffers, const std::size_t* lens, unsigned n, bool* busy, int* error) {
  constexpr unsigned kMax = 64;
  iovec iov[kMax];
  mmsghdr msgs[kMax];
  unsigned total = 0;
  *busy = false;
  *error = 0;
  while (total < n) {
    unsigned m = std::min(kMax, n - total);
    for (unsigned i = 0; i < m; ++i) {
      iov[i] = iovec{buffers[total + i], lens[total + i]};
      msgs[i] = mmsghdr{};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    int r = sendmmsg(fd, msgs, m, MSG_DONTWAIT);
    if (r < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) *busy = true;
      else if (errno == EINTR) continue;
      else *error = errno;
      break;
    }
    total += unsigned(r);
    if (unsigned(r) < m) {  // partial: the next datagram hit a full buffer
      *busy = true;
      break;
    }
  }
  return int(total);
}

}  // namespace hilrig
