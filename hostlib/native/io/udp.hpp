// UDP transport: one frame per datagram, recvmmsg/sendmmsg batches, UDP GSO
// (UDP_SEGMENT: one send carries up to 64 KiB of equal-size datagrams) and GRO
// (UDP_GRO: one receive returns several coalesced datagrams) where the kernel
// offers them, with a clean fallback to one datagram per mmsghdr.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hilrig {

// Socket helpers of the udp and tcp transports. proto/what name the transport in messages.
// An IPv4 address; throws std::runtime_error when host is not one.
sockaddr_in ipv4_address(const std::string& host, std::uint16_t port, const char* what);
// Sets SO_RCVBUF/SO_SNDBUF to bytes (SO_*BUFFORCE first, which CAP_NET_ADMIN may take past
// rmem_max/wmem_max; 0: leaves the kernel's default). Returns a UHD-style warning when
// the kernel granted less, else empty.
std::string set_socket_buffer(int fd, bool receive, std::uint32_t bytes, const char* proto);
// The getsockopt value of SO_RCVBUF / SO_SNDBUF (Linux reports twice the usable size).
std::uint32_t socket_buffer_granted(int fd, bool receive);

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
  // Asks the kernel for UDP_GRO on this socket; false when it refuses (old kernel).
  bool enable_gro();
  // Sets SO_BUSY_POLL (microseconds the kernel may spin in a blocking receive); false if refused.
  bool enable_busy_poll(int usec);
  // Sending side: connected to host:port.
  static UdpSocket connect_to(const std::string& host, std::uint16_t port, std::uint32_t sndbuf_bytes);
  // Requested buffer bytes the socket did not get (net.core.rmem_max/wmem_max caps
  // SO_RCVBUF/SO_SNDBUF; SO_*BUFFORCE is tried first when we have CAP_NET_ADMIN).
  // Empty when the whole request was granted, else a UHD-style warning text.
  const std::string& buffer_warning() const { return buffer_warning_; }

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
  std::string buffer_warning_;
};

// Batched receive buffers for recvmmsg. With gro = true every buffer holds a whole
// coalesced 64 KiB GRO packet and segment(i) says how it splits into datagrams.
class UdpRecvBatch {
 public:
  UdpRecvBatch(unsigned batch, std::size_t max_datagram_bytes, bool gro = false);
  // Non-blocking; returns number of messages (0 if none), -1 on a socket error (errno set).
  int recv(int fd);
  const std::uint8_t* data(unsigned i) const { return bufs_.data() + std::size_t(i) * max_; }
  std::size_t len(unsigned i) const { return msgs_[i].msg_len; }
  bool truncated(unsigned i) const { return msgs_[i].msg_hdr.msg_flags & MSG_TRUNC; }
  // Datagram size of message i: the GRO segment size, or len(i) when not coalesced.
  std::size_t segment(unsigned i) const;
  // Calls fn(ptr, len) for each datagram of message i (GRO: split at segment()).
  template <typename Fn>
  void for_each_datagram(unsigned i, Fn&& fn) const {
    const std::uint8_t* p = data(i);
    std::size_t left = len(i), seg = segment(i);
    if (seg == 0) seg = left;
    while (left > 0) {
      std::size_t n = left < seg ? left : seg;
      fn(p, n);
      p += n;
      left -= n;
    }
  }

 private:
  static constexpr std::size_t kCtrlBytes = 64;
  std::size_t max_;
  bool gro_;
  std::vector<std::uint8_t> bufs_;
  std::vector<std::uint8_t> ctrl_;
  std::vector<iovec> iov_;
  std::vector<mmsghdr> msgs_;
};

// Sends equal-length frames stored back to back (stride = frame_len) on a connected
// socket, non-blocking. With GSO, up to 64 KiB of frames leave in one mmsghdr
// (UDP_SEGMENT cmsg); when the kernel or route refuses GSO it falls back for good
// to one datagram per mmsghdr. Returns frames sent; stops at the first
// EAGAIN/ENOBUFS (*busy = true) or error (*error = errno). A GSO message is sent
// whole or not at all, so the count is always a whole number of frames.
// GSO/GRO only pay when several frames share one 64 KiB super-packet: at 16000
// bytes (4 per packet) `make bench` carries ~2x more with them, at 32000 (2 per
// packet) and 65000 (1) less, because a GRO receiver takes 16 64 KiB buffers per
// recvmmsg instead of 64 frame-sized ones and gains no coalescing. So they are used
// only for frames that fit kUdpOffloadMinFrames times into 65000 bytes (<= 16250).
inline constexpr unsigned kUdpOffloadMinFrames = 4;
inline constexpr bool udp_offload_pays(std::uint32_t frame_bytes) {
  return frame_bytes > 0 && std::uint64_t(frame_bytes) * kUdpOffloadMinFrames <= 65000;
}

class UdpSender {
 public:
  UdpSender() = default;
  UdpSender(int fd, std::uint32_t frame_len, bool gso);
  int send(const std::uint8_t* frames, unsigned n, bool* busy, int* error);
  bool gso_active() const { return gso_per_msg_ > 1; }
  unsigned frames_per_message() const { return gso_per_msg_; }

 private:
  int fd_ = -1;
  std::uint32_t frame_len_ = 0;
  unsigned gso_per_msg_ = 1;
};

// Sends up to n datagrams of buffers[i]/lens[i] on a connected socket, non-blocking.
// Returns the number sent; stops at the first EAGAIN/ENOBUFS (*busy = true) or error (*error = errno).
int udp_send_batch(int fd, std::uint8_t* const* buffers, const std::size_t* lens, unsigned n, bool* busy, int* error);

}  // namespace hilrig
