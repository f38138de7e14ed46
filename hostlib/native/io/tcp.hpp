// TCP transport (docs/transports.md "tcp"): frames with the same 48-byte header back
// to back on one connection; the receiver finds each frame's end from its header's
// payload_bytes (FrameReassembler). Like UDP, the receiver owns the endpoint: it
// listens on host:port (port 0: any free port) and the sender connects, retrying
// until a deadline while nothing listens yet.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/io/frame_view.hpp"

namespace hilrig {

// What the kernel says of a connection (getsockopt TCP_INFO, TCP_CONGESTION,
// SO_SNDBUF/SO_RCVBUF). The RTT and cwnd are the sending side's own estimates.
struct TcpInfo {
  bool connected = false;
  std::uint64_t retransmits = 0;     // tcpi_total_retrans: segments retransmitted over the connection
  std::uint64_t rtt_ns = 0;          // smoothed round-trip time
  std::uint64_t rttvar_ns = 0;       // its mean deviation
  std::uint64_t cwnd_segments = 0;   // congestion window (snd_cwnd)
  std::uint64_t sndbuf_bytes = 0;    // SO_SNDBUF / SO_RCVBUF as granted (getsockopt: twice the usable size)
  std::uint64_t rcvbuf_bytes = 0;
  std::string congestion;            // the congestion control in use
};
nlohmann::json to_json(const TcpInfo& i);

class TcpSocket {
 public:
  TcpSocket() = default;
  ~TcpSocket();
  TcpSocket(const TcpSocket&) = delete;
  TcpSocket& operator=(const TcpSocket&) = delete;
  TcpSocket(TcpSocket&& o) noexcept;
  TcpSocket& operator=(TcpSocket&& o) noexcept;

  // Receiving side: a listener on host:port with SO_RCVBUF rcvbuf_bytes (set before
  // listen, so accepted connections have it and their window scale fits it).
  static TcpSocket listen_on(const std::string& host, std::uint16_t port, std::uint32_t rcvbuf_bytes);
  // A connection waiting on this listener (non-blocking), or an invalid socket.
  [[nodiscard]] TcpSocket accept_one() const;
  // Sending side: connected to host:port, SO_SNDBUF sndbuf_bytes, congestion control
  // `congestion` (empty: the kernel's default) and TCP_NODELAY, all set before the
  // handshake. A refused connect is retried until deadline_ns; then std::runtime_error
  // naming host:port. A congestion control the kernel refuses: std::invalid_argument
  // naming what /proc/sys/net/ipv4/tcp_allowed_congestion_control allows.
  static TcpSocket connect_to(const std::string& host, std::uint16_t port, std::uint32_t sndbuf_bytes,
                              const std::string& congestion, bool nodelay, std::uint64_t deadline_ns);

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  std::uint16_t local_port() const;
  const std::string& buffer_warning() const { return buffer_warning_; }
  TcpInfo info() const;
  bool wait_readable(int timeout_ms) const;
  bool wait_writable(int timeout_ms) const;

 private:
  int fd_ = -1;
  std::string buffer_warning_;
};

// Frames from a byte stream: bytes go in as they arrive (space(), filled()), whole
// frames come out (take()), each found from the one before by its header's
// payload_bytes. No socket: the split of the bytes into reads does not matter.
// A header that cannot start a frame of this stream (bad magic, a frame longer than
// max_frame_bytes) leaves the rest of the stream unframeable: take() returns what is
// buffered as one malformed view and the reassembler is lost() from then on.
class FrameReassembler {
 public:
  explicit FrameReassembler(std::uint32_t max_frame_bytes);
  // Where the next bytes go and how many fit. Moves a partial frame to the front
  // first: call it only when no taken frame is in use any more.
  [[nodiscard]] std::uint8_t* space(std::size_t* room);
  void filled(std::size_t n) { tail_ += n; }
  // A whole frame (or the malformed rest) is ready for take().
  bool ready() const;
  [[nodiscard]] FrameView take();
  // The stream ended (EOF) with buffered bytes of an unfinished frame: they become one
  // malformed view for take(). Returns that frame's buffered and expected bytes (0, 0: none).
  std::pair<std::size_t, std::size_t> cut();
  std::size_t buffered() const { return tail_ - head_; }
  bool lost() const { return lost_; }
  void reset() { head_ = tail_ = 0; lost_ = cut_ = false; }

 private:
  std::uint32_t max_len_;
  std::vector<std::uint8_t> buf_;
  std::size_t head_ = 0, tail_ = 0;
  bool lost_ = false, cut_ = false;
};

}  // namespace hilrig
