// UDP transport: one frame per datagram, recvmmsg/sendmmsg batches.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hilrig {

class UdpSocket {
 public:
  UdpSocket() = default;
  ~UdpSocket();
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;
  UdpSocket(UdpSocket&& o) noexcept;
  UdpSocket& operator=(UdpSocket&& o) noexcept;

  // Receiving side: bind host:port (port 0 = any free port). Throws std::runtime_error.
  static UdpSocket bind_to(const std::string& host, std::uint16_t port, std::uint32_t rcvbuf_bytes);
  // Sending side: connected to host:port.
  static UdpSocket connect_to(const std::string& host, std::uint16_t port, std::uint32_t sndbuf_bytes);

  int fd() const { return fd_; }
  std::uint16_t local_port() const;
  // What the kernel granted for SO_RCVBUF / SO_SNDBUF (getsockopt value, which
  // Linux doubles for its bookkeeping; capped by net.core.rmem_max/wmem_max).
  std::uint32_t granted_rcvbuf() const;
  std::uint32_t granted_sndbuf() const;

  // Waits up to timeout_ms for data; true when readable.
  bool wait_readable(int timeout_ms) const;
  bool wait_writable(int timeout_ms) const;

 private:
  int fd_ = -1;
};

// Batched receive buffers for recvmmsg.
class UdpRecvBatch {
 public:
  UdpRecvBatch(unsigned batch, std::size_t max_datagram_bytes);
  // Non-blocking; returns number of datagrams (0 if none), -1 on a socket error (errno set).
  int recv(int fd);
  const std::uint8_t* data(unsigned i) const { return bufs_.data() + std::size_t(i) * max_; }
  std::size_t len(unsigned i) const { return msgs_[i].msg_len; }
  bool truncated(unsigned i) const { return msgs_[i].msg_hdr.msg_flags & MSG_TRUNC; }

 private:
  std::size_t max_;
  std::vector<std::uint8_t> bufs_;
  std::vector<iovec> iov_;
  std::vector<mmsghdr> msgs_;
};

// Sends up to n datagrams of buffers[i]/lens[i] on a connected socket, non-blocking.
// Returns the number sent; stops at the first EAGAIN/ENOBUFS (*busy = true) or error (*error = errno).
int udp_send_batch(int fd, std::uint8_t* const* buffers, const std::size_t* lens, unsigned n, bool* busy, int* error);

}  // namespace hilrig
