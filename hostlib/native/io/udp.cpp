#include "hilrig/io/udp.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/udp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hilrig {
sockaddr_in ipv4_address(const std::string& host, std::uint16_t port, const char* what) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    throw std::runtime_error(std::string(what) + ": host '" + host + "' is not an IPv4 address");
  return a;
}
std::uint32_t socket_buffer_granted(int fd, bool receive) {
  int v = 0;
  socklen_t l = sizeof v;
  getsockopt(fd, SOL_SOCKET, receive ? SO_RCVBUF : SO_SNDBUF, &v, &l);
  return std::uint32_t(v);
}
std::string set_socket_buffer(int fd, bool receive, std::uint32_t bytes, const char* proto) {
  if (!bytes) return {};
  int v = int(std::min<std::uint32_t>(bytes, 0x7fffffff));
  const int force = receive ? SO_RCVBUFFORCE : SO_SNDBUFFORCE, plain = receive ? SO_RCVBUF : SO_SNDBUF;
  if (setsockopt(fd, SOL_SOCKET, force, &v, sizeof v) != 0) setsockopt(fd, SOL_SOCKET, plain, &v, sizeof v);
  std::uint32_t got = socket_buffer_granted(fd, receive) / 2;
  if (got >= bytes) return {};
  const char* sysctl = receive ? "net.core.rmem_max" : "net.core.wmem_max";
  return std::string(proto) + ": " + (receive ? "receive" : "send") + " buffer " + std::to_string(bytes) +
         " bytes requested, the kernel granted " + std::to_string(got) + " (capped by " + sysctl +
         "); frames may be lost at high rates: sudo sysctl -w " + sysctl + "=" + std::to_string(bytes);
}

namespace {
sockaddr_in make_addr(const std::string& host, std::uint16_t port, const char* what) {
  return ipv4_address(host, port, (std::string("udp ") + what).c_str());
}
int make_socket() {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw std::runtime_error(std::string("udp: socket() failed: ") + std::strerror(errno));
  return fd;
}
std::string setbuf(int fd, bool receive, std::uint32_t bytes) { return set_socket_buffer(fd, receive, bytes, "udp"); }
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
  s.buffer_warning_ = setbuf(s.fd_, true, rcvbuf_bytes);
  sockaddr_in a = make_addr(host, port, "bind");
  if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw std::runtime_error("udp: bind to " + host + ":" + std::to_string(port) + " failed: " + std::strerror(errno));
  return s;
}

UdpSocket UdpSocket::connect_to(const std::string& host, std::uint16_t port, std::uint32_t sndbuf_bytes) {
  UdpSocket s;
  s.fd_ = make_socket();
  s.buffer_warning_ = setbuf(s.fd_, false, sndbuf_bytes);
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
std::uint32_t UdpSocket::granted_rcvbuf() const { return socket_buffer_granted(fd_, true); }
std::uint32_t UdpSocket::granted_sndbuf() const { return socket_buffer_granted(fd_, false); }

bool UdpSocket::enable_gro() {
  int one = 1;
  return setsockopt(fd_, IPPROTO_UDP, UDP_GRO, &one, sizeof one) == 0;
}
bool UdpSocket::enable_busy_poll(int usec) {
  return setsockopt(fd_, SOL_SOCKET, SO_BUSY_POLL, &usec, sizeof usec) == 0;
}

bool UdpSocket::wait_readable(int timeout_ms) const {
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) > 0 && (p.revents & POLLIN);
}
bool UdpSocket::wait_writable(int timeout_ms) const {
  pollfd p{fd_, POLLOUT, 0};
  return ::poll(&p, 1, timeout_ms) > 0 && (p.revents & POLLOUT);
}

// A GRO message is at most one 64 KiB IP packet's worth of UDP payload.
static constexpr std::size_t kGroBytes = 65536;

UdpRecvBatch::UdpRecvBatch(unsigned batch, std::size_t max_datagram_bytes, bool gro)
    : max_(gro ? std::max(kGroBytes, max_datagram_bytes) : max_datagram_bytes),
      gro_(gro),
      bufs_(batch * max_),
      ctrl_(gro ? batch * kCtrlBytes : 0),
      iov_(batch),
      msgs_(batch) {}

std::size_t UdpRecvBatch::segment(unsigned i) const {
  if (!gro_) return len(i);
  const msghdr& m = msgs_[i].msg_hdr;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(const_cast<msghdr*>(&m), c)) {
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int seg = 0;
      std::memcpy(&seg, CMSG_DATA(c), sizeof seg);
      return seg > 0 ? std::size_t(seg) : len(i);
    }
  }
  return len(i);
}

int UdpRecvBatch::recv(int fd) {
  for (std::size_t i = 0; i < msgs_.size(); ++i) {
    iov_[i] = iovec{bufs_.data() + i * max_, max_};
    msgs_[i] = mmsghdr{};
    msgs_[i].msg_hdr.msg_iov = &iov_[i];
    msgs_[i].msg_hdr.msg_iovlen = 1;
    if (gro_) {
      msgs_[i].msg_hdr.msg_control = ctrl_.data() + i * kCtrlBytes;
      msgs_[i].msg_hdr.msg_controllen = kCtrlBytes;
    }
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

UdpSender::UdpSender(int fd, std::uint32_t frame_len, bool gso) : fd_(fd), frame_len_(frame_len) {
  // 64 segments: the limit every GSO-capable kernel accepts (UDP_MAX_SEGMENTS was 64
  // before 5.x raised it); 65000 bytes: the UDP length field minus headers.
  if (gso && udp_offload_pays(frame_len)) gso_per_msg_ = unsigned(std::clamp<std::uint32_t>(65000u / frame_len, 1u, 64u));
}

int UdpSender::send(const std::uint8_t* frames, unsigned n, bool* busy, int* error) {
  *busy = false;
  *error = 0;
  if (gso_per_msg_ <= 1) {
    constexpr unsigned kMax = 64;
    std::uint8_t* ptrs[kMax];
    std::size_t lens[kMax];
    unsigned total = 0;
    while (total < n) {
      unsigned m = std::min(kMax, n - total);
      for (unsigned i = 0; i < m; ++i) {
        ptrs[i] = const_cast<std::uint8_t*>(frames) + std::size_t(total + i) * frame_len_;
        lens[i] = frame_len_;
      }
      int r = udp_send_batch(fd_, ptrs, lens, m, busy, error);
      total += unsigned(r);
      if (unsigned(r) < m) break;
    }
    return int(total);
  }
  constexpr unsigned kMaxMsgs = 32;
  alignas(cmsghdr) char ctrl[kMaxMsgs][CMSG_SPACE(sizeof(std::uint16_t))];
  iovec iov[kMaxMsgs];
  mmsghdr msgs[kMaxMsgs];
  unsigned segs[kMaxMsgs];
  unsigned total = 0;
  while (total < n) {
    unsigned m = 0, off = total;
    while (m < kMaxMsgs && off < n) {
      unsigned k = std::min(gso_per_msg_, n - off);
      iov[m] = iovec{const_cast<std::uint8_t*>(frames) + std::size_t(off) * frame_len_, std::size_t(k) * frame_len_};
      msgs[m] = mmsghdr{};
      msgs[m].msg_hdr.msg_iov = &iov[m];
      msgs[m].msg_hdr.msg_iovlen = 1;
      if (k > 1) {
        msgs[m].msg_hdr.msg_control = ctrl[m];
        msgs[m].msg_hdr.msg_controllen = sizeof ctrl[m];
        cmsghdr* c = CMSG_FIRSTHDR(&msgs[m].msg_hdr);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
        std::uint16_t seg = std::uint16_t(frame_len_);
        std::memcpy(CMSG_DATA(c), &seg, sizeof seg);
      }
      segs[m] = k;
      off += k;
      ++m;
    }
    int r = sendmmsg(fd_, msgs, m, MSG_DONTWAIT);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
        *busy = true;
      } else if (errno == EINVAL || errno == EIO || errno == ENOPROTOOPT || errno == EOPNOTSUPP || errno == EMSGSIZE) {
        // GSO refused (old kernel, route MTU below the frame, no checksum offload):
        // fall back to one datagram per message for good and carry on.
        gso_per_msg_ = 1;
        int more = send(frames + std::size_t(total) * frame_len_, n - total, busy, error);
        return int(total) + more;
      } else {
        *error = errno;
      }
      break;
    }
    for (int i = 0; i < r; ++i) total += segs[i];
    if (unsigned(r) < m) {
      *busy = true;
      break;
    }
  }
  return int(total);
}

}  // namespace hilrig
