// A frame source: received frames, read in place, from a UDP socket (recvmmsg
// batches, GRO super-packets split into their datagrams), a TCP connection (the byte
// stream cut into frames by their headers, io/tcp.hpp), a shared-memory ring
// (SPSC, the consumer side) or a transfer feed (the USB engine's completed IN
// transfers, each split into the frames packed in it).
//
// How a front-end uses it:
//   FrameSource src(cfg);            // binds the socket / creates or opens the ring
//   tell the sender src.endpoint();
//   batch loop (RxStream, the USB engine, the simulator's TX side):
//     if (!src.wait(timeout_ns)) { idle; continue; }
//     while (FrameView f = src.take()) { use f; src.release(); }
//   one frame at a time (SoapySDR readStream's acquire/release, rig_source::work):
//     FrameView f = src.next(timeout_ns);   // empty: nothing within the timeout
//     ... use f (valid until release) ...; src.release();
// A view with malformed set is a datagram, slot or piece of a transfer that cannot be
// a frame of this stream (truncated, or larger than a frame): count it
// (RxChecker::on_malformed), never parse it, release it like any other. A frame the
// checker refuses is passed to reject() before its release (check_batch in
// io/streams.hpp does both).
// take()/next()/release() are inline and branch on the transport once per frame; the
// work per batch (the receive call, the ring's wait, the feed's event loop) is out of
// line.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/core/config.hpp"
#include "hilrig/io/frame_view.hpp"
#include "hilrig/io/shm_ring.hpp"
#include "hilrig/io/tcp.hpp"
#include "hilrig/io/udp.hpp"

namespace hilrig {

// Where a transfer-fed source gets its batches: the USB engine's IN direction
// (usb/usb_engine.hpp). A transfer holds frames back to back, each found from
// the header of the one before it. Called on the thread that reads the source.
class TransferFeed {
 public:
  struct Transfer {
    const std::uint8_t* data = nullptr;
    std::uint32_t bytes = 0;  // what the transfer carried (0: none, still a batch)
  };
  // Up to timeout_ns for a completed transfer (running the backend's events); false: none.
  [[nodiscard]] virtual bool next_transfer(std::uint64_t timeout_ns, Transfer* out) = 0;
  // The frames of the transfer last returned are done with (the engine resubmits it).
  virtual void release_transfer() = 0;
  // The transfer last returned ended inside a frame (a short transfer).
  virtual void on_short_transfer() = 0;

 protected:
  ~TransferFeed() = default;
};

class FrameSource {
 public:
  // Receives as cfg.transport says, its sizes as given (resolve_stream_config sized them):
  // udp binds host:port (port 0: any free port) with socket_buffer_bytes; tcp listens
  // there the same way and takes the first sender that connects; shm creates a
  // ring of transport.slots when transport.path is empty, else opens that ring. Throws
  // std::runtime_error / std::invalid_argument naming what failed.
  explicit FrameSource(const StreamConfig& cfg);
  // Reads the transfers of feed, frames of at most max_frame_bytes packed back to back
  // (the USB engine's IN direction).
  FrameSource(TransferFeed& feed, std::uint32_t max_frame_bytes);
  FrameSource(const FrameSource&) = delete;
  FrameSource& operator=(const FrameSource&) = delete;

  TransportKind kind() const { return cfg_.transport.kind; }
  // Where a sender sends: {"kind": "udp", "host", "port", socket buffer figures, "gso",
  // "gro"}, {"kind": "tcp", "host", "port", socket buffer figures}, {"kind": "shm",
  // "path", "slots"} or {"kind": "usb"} (the engine's device).
  nlohmann::json endpoint() const;
  std::uint16_t port() const { return sock_.local_port(); }
  // Problems found while setting up (a socket buffer capped by rmem_max, GRO refused),
  // and a TCP stream that ended inside a frame.
  std::vector<std::string> warnings() const;
  // tcp: the connection's figures (TcpInfo as JSON; connected false before a sender
  // came); null for the other transports. Safe to call while another thread receives.
  nlohmann::json tcp_info() const;

  // Gives the released frames back to the sender, then waits up to timeout_ns for
  // more (0: only looks). True when a batch is ready for take(), at once when frames
  // of the last one are left; false on timeout (or a socket error: error() says which).
  [[nodiscard]] bool wait(std::uint64_t timeout_ns);
  // The next frame of the ready batch; empty when the batch is used up.
  [[nodiscard]] FrameView take() {
    return ring_ ? take_slot() : reasm_ ? reasm_->take() : !feed_ ? take_datagram() : take_transfer();
  }
  // The last taken frame is done with: call it after each take(), before the next. A ring
  // slot goes back to the sender at the next wait() or release_batch(), a transfer when
  // its batch is released.
  void release() {
    if (ring_) ring_->release_deferred();
  }
  // The last taken frame is not a frame of this stream after all (RxChecker::on_frame
  // refused it); release() it as usual. A transfer's next frame is found from this
  // one's header, so the rest of the transfer is lost (the next frame's seq counts it
  // missing); a datagram or slot stands alone, and so does a TCP frame (its length was
  // good, or take() would have called it malformed).
  void reject() {
    if (feed_) xfer_off_ = xfer_bytes_;
  }
  // Gives every released slot, or the transfer taken from, back to the sender now (the
  // end of a batch or of a stream).
  void release_batch() {
    if (ring_) ring_->flush_released();
    else if (feed_) release_transfer();
  }
  // take(), and when the batch is used up wait() up to timeout_ns for the next one.
  [[nodiscard]] FrameView next(std::uint64_t timeout_ns) {
    if (FrameView f = take()) return f;
    if (!wait(timeout_ns)) return {};
    return take();
  }
  // errno of the last failed receive call (0: none).
  int error() const { return error_; }

  // Slots of a batch from the ring before the released ones go back in one store.
  static constexpr unsigned kRingBatch = 32;

 private:
  FrameView take_slot() {
    if (taken_ == kRingBatch) return {};
    std::uint32_t len = 0;
    const std::uint8_t* p = ring_->peek(&len);
    if (!p) return {};
    ++taken_;
    return {p, len, len > max_len_};
  }
  FrameView take_datagram() {
    while (msg_ < msgs_) {
      if (batch_->truncated(msg_)) return {batch_->data(msg_++), 0, true};
      const std::size_t len = batch_->len(msg_);
      if (off_ < len) {
        const std::size_t n = len - off_ < seg_ ? len - off_ : seg_;
        const std::uint8_t* p = batch_->data(msg_) + off_;
        off_ += n;
        return {p, std::uint32_t(n), n > max_len_};
      }
      next_message();
    }
    return {};
  }
  void next_message();
  // The USB rules: a transfer that ends inside a frame is a short transfer (the cut
  // frame is malformed); a frame longer than max_len_ is not of this stream, and the
  // frames after it cannot be found.
  FrameView take_transfer();
  void release_transfer();

  bool gro_wanted() const;
  // tcp: the end of a wait(): bytes read into the reassembler, a connection accepted.
  bool wait_tcp(std::uint64_t timeout_ns);
  StreamConfig cfg_;
  // tcp: the listener, the one connection read from (replaced under tcp_mu_ while
  // tcp_info() may read it), its bytes cut into frames, and why it ended badly.
  TcpSocket listener_, conn_;
  bool conn_ended_ = false;
  std::unique_ptr<FrameReassembler> reasm_;
  std::string tcp_error_;
  mutable std::mutex tcp_mu_;
  UdpSocket sock_;
  bool gro_ = false, busy_poll_ = false;
  std::unique_ptr<UdpRecvBatch> batch_;
  std::unique_ptr<ShmConsumer> ring_;
  TransferFeed* feed_ = nullptr;
  std::uint32_t max_len_ = 0;  // a longer datagram, slot or frame in a transfer is malformed
  // The batch being taken: UDP message msg_ of msgs_, offset off_ in it, its datagram
  // size seg_ (GRO); ring: slots taken_ of at most kRingBatch.
  unsigned msg_ = 0, msgs_ = 0, taken_ = 0;
  std::size_t off_ = 0, seg_ = 0;
  // The transfer being taken: its bytes, the offset of its next frame; held until its
  // batch is released.
  const std::uint8_t* xfer_ = nullptr;
  std::uint32_t xfer_bytes_ = 0, xfer_off_ = 0;
  bool xfer_held_ = false;
  int error_ = 0;
};

}  // namespace hilrig
