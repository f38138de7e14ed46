// A frame sink: frames built in place, then sent to a UDP destination (sendmmsg, GSO
// batches of equal frames), written to a TCP connection (back to back, write_bytes per
// send() call) or published into a shared-memory ring (the producer side), with the
// core's one send-with-retry (send_with_retry below).
//
// How a front-end uses it:
//   FrameSink sink(cfg);                       // connects to / opens cfg.transport
//   one frame (SoapySDR writeStream, rig_sink::work, the simulator's loopback):
//     std::uint8_t* out = sink.acquire(timeout_ns);   // nullptr: no room in time
//     build the frame in out (at most max_frame_bytes()); sink.commit(len);
//     unsigned sent = sink.flush(deadline_ns);        // 0: lost (error() says why)
//   batches (TxStream): up to batch_capacity() acquire/commit pairs, one flush.
// Ring frames are stamped (send time, CRC when the stream has it) at commit, UDP
// frames with one send time at flush, just before they leave. A paced UDP stream
// (transport.pacing) sends its datagrams one by one, each stamped when its pacer
// lets it go (no GSO: a super-packet would leave as one burst). TCP frames are stamped
// when first offered to the socket. flush never leaves a frame half written (the byte
// stream would lose its framing), so its deadline only drops frames not yet begun;
// send_some may leave one begun and goes on with it at the next call.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/config.hpp"
#include "hilrig/core/tx_pacer.hpp"
#include "hilrig/io/shm_ring.hpp"
#include "hilrig/io/tcp.hpp"
#include "hilrig/io/udp.hpp"

namespace hilrig {

// The one send-with-retry: try_send(done, &busy, &error) sends frames [done, n) and
// returns how many left. Retries while the socket is busy (its buffer full), waiting
// for room, until deadline_ns or *stop; a real error ends it (*error = errno).
// Returns the frames sent; the rest are lost.
template <class TrySend>
unsigned send_with_retry(const UdpSocket& sock, unsigned n, std::uint64_t deadline_ns, const std::atomic<bool>* stop,
                         int* error, TrySend&& try_send) {
  unsigned sent = 0;
  *error = 0;
  while (sent < n) {
    bool busy = false;
    sent += try_send(sent, &busy, error);
    if (sent == n || !busy) break;  // done, or a real socket error: the rest is lost
    if (now_ns() >= deadline_ns || (stop && stop->load(std::memory_order_relaxed))) break;
    sock.wait_writable(1);
  }
  return sent;
}

class FrameSink {
 public:
  // Sends where cfg.transport says: udp connects to host:port (send buffer of
  // socket_buffer_bytes, as given), tcp too (retrying for kTcpConnectTimeoutNs while
  // nothing listens there; congestion and nodelay set before the handshake), shm opens
  // transport.path (a ring whose slots must hold frame_bytes).
  // Throws std::runtime_error / std::invalid_argument naming what failed.
  explicit FrameSink(const StreamConfig& cfg);
  FrameSink(const FrameSink&) = delete;
  FrameSink& operator=(const FrameSink&) = delete;

  TransportKind kind() const { return cfg_.transport.kind; }
  UdpSocket& socket() { return sock_; }
  // Slots of the ring frames go into (0 over UDP): how many frames the link holds.
  std::uint32_t ring_slots() const { return ring_ ? ring_->ring().slot_count() : 0; }
  std::uint32_t max_frame_bytes() const { return max_len_; }
  // Frames one flush carries (UDP: the batch buffer; a ring takes any number).
  unsigned batch_capacity() const { return cap_; }
  bool gso_active() const { return sender_.gso_active(); }
  // Per-datagram pacing (inactive unless transport.pacing is set): achieved periods.
  const TxPacer::Datagrams& pacing() const { return pacing_; }
  // The sender's rate clock held the next frames until now_ns: the pacer spaces them from
  // there instead of catching up on time there was nothing to send (TxPacer::Datagrams::ready).
  void pacing_ready(std::uint64_t now_ns) { pacing_.ready(now_ns); }
  const std::string& buffer_warning() const { return tcp_.valid() ? tcp_.buffer_warning() : sock_.buffer_warning(); }
  // tcp: the connection's figures (TcpInfo as JSON), null for the other transports.
  // Safe to call while another thread sends.
  nlohmann::json tcp_info() const { return tcp_.valid() ? to_json(tcp_.info()) : nlohmann::json(nullptr); }
  // tcp: waits up to timeout_ms for room in the socket's send buffer.
  bool wait_writable(int timeout_ms) const { return tcp_.valid() ? tcp_.wait_writable(timeout_ms) : sock_.wait_writable(timeout_ms); }

  // Room for the next frame: a ring slot (waiting up to timeout_ns for one) or the
  // next place in the UDP batch (never waits). nullptr: no room.
  [[nodiscard]] std::uint8_t* acquire(std::uint64_t timeout_ns);
  // The frame in the last acquired buffer is complete (len bytes).
  void commit(std::uint32_t len);
  // Sends what was committed, retrying a busy socket until deadline_ns (or *stop).
  // Returns the frames sent; the others of the batch are lost.
  unsigned flush(std::uint64_t deadline_ns, const std::atomic<bool>* stop = nullptr);
  // tcp (the simulator's device FIFO): sends what the connection takes until deadline_ns
  // and keeps the rest, in order, for the next send_some / flush (a frame the connection
  // took part of stays begun: the next call goes on with it). Returns the frames sent whole.
  unsigned send_some(std::uint64_t deadline_ns);
  // tcp: frames committed and not sent whole yet; drop_pending(n) discards up to n of
  // them, oldest first, never a begun one, and returns how many.
  unsigned pending() const { return n_; }
  unsigned drop_pending(unsigned n);
  // errno of the last failed send (0: none).
  int error() const { return error_; }

 private:
  std::uint8_t* at(unsigned i) { return buf_.data() + std::size_t(i) * max_len_; }
  // tcp: writes the committed frames until deadline_ns (or *stop), keeping the unsent
  // ones (finish_begun: a frame begun is written whole first); returns the frames
  // written whole.
  unsigned write_tcp(std::uint64_t deadline_ns, const std::atomic<bool>* stop, bool finish_begun);
  StreamConfig cfg_;
  UdpSocket sock_;
  // tcp: frames back to back in buf_: frame i at offs_[i], lens_[i] bytes; fill_ bytes
  // in all; the first head_sent_ bytes (of frame 0) are written already; the first
  // stamped_ frames were stamped when first offered.
  TcpSocket tcp_;
  std::vector<std::size_t> offs_;
  std::size_t fill_ = 0, head_sent_ = 0;
  unsigned stamped_ = 0;
  UdpSender sender_;
  TxPacer::Datagrams pacing_;
  std::unique_ptr<ShmProducer> ring_;
  std::uint32_t max_len_ = 0;
  unsigned cap_ = 0, n_ = 0;
  bool equal_ = true;  // every committed UDP frame is max_len_ long (one GSO batch)
  std::uint8_t* slot_ = nullptr;
  std::vector<std::uint8_t> buf_;
  std::vector<std::uint8_t*> ptrs_;
  std::vector<std::size_t> lens_;
  int error_ = 0;
};

}  // namespace hilrig
