// The simulator's RX links (device -> host). SimDevice::run_rx decides each frame's
// fate once (FaultPlan) and hands frames to a link; a link only moves bytes. A link
// is a template argument, not a virtual base: at 256-byte frames (30 M frames/s over
// shm) an indirect call per frame would be a visible share of the frame's cost.
//
// A link provides:
//   std::uint8_t* acquire();           buffer for the next frame, nullptr = no room now
//   void commit(std::uint32_t len);    the frame in the last acquired buffer is complete
//   bool batch_full() const;           stop building: hand this batch over first
//   bool room_for(unsigned n);         n frames fit now (a duplicate/swap pair)
//   void end_batch(bool more_due);     hand the batch over (may wait briefly for room)
//   std::uint64_t pending() const;     frames built but not taken (device FIFO occupancy)
//   std::uint64_t drop_pending(std::uint64_t n);  overflow: discard up to n of them, oldest first
//   std::uint64_t free_frames();       frames the link takes right now (0 = unknown)
//   bool full(std::uint64_t free) const;  the link (not the producer) is why frames overflow
//   void idle_until(std::uint64_t t_ns);  nothing is due before t_ns: wait (the USB link keeps its bus going)
//   template <class B> void finish(B&& build_last, std::uint64_t deadline_ns);
//                                      flush, then send the frame build_last(buf) -> len
// UsbSimLink implements the same members (and, for TX, service_out).
#pragma once
#include <deque>
#include <mutex>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/config.hpp"
#include "hilrig/core/counter.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/io/frame_sink.hpp"
#include "hilrig/io/shm_ring.hpp"
#include "hilrig/io/udp.hpp"
#include "hilrig/usb/usb_bus_model.hpp"
#include "hilrig/usb/usb_sim_channel.hpp"

namespace hilrig {

// What a link reports: frames (and their samples) handed over, and sends that failed.
struct LinkTally {
  Counter& frames_sent;
  Counter& samples_sent;
  Counter& link_errors;
  std::uint32_t samples_per_frame;
  void sent(std::uint64_t n) {
    counter_add(frames_sent, n);
    counter_add(samples_sent, n * samples_per_frame);
  }
};

// UDP: frames built back to back (equal length, as GSO wants) and sent in one
// GSO/sendmmsg call; frames the socket did not take stay at the front as pending.
class UdpBatchLink {
 public:
  UdpBatchLink(UdpSocket& sock, const StreamConfig& cfg, LinkTally tally)
      : sock_(sock), crc_(cfg.crc), flen_(std::uint32_t(kFrameHeaderBytes) + cfg.payload_bytes()),
        cap_(std::clamp<unsigned>((1u << 20) / flen_, 4, 512)), buf_(std::size_t(cap_) * flen_ + 64),
        sender_(sock.fd(), flen_, cfg.transport.gso), tally_(tally) {}

  std::uint8_t* acquire() { return n_ < cap_ ? at(n_) : nullptr; }
  void commit(std::uint32_t) { ++n_; }
  bool batch_full() const { return n_ + 2 > cap_; }  // a pair always fits a batch not full
  bool room_for(unsigned k) const { return n_ + k <= cap_; }
  void end_batch(bool) {
    if (n_ == 0) return;
    const std::uint64_t ts = now_ns();
    for (unsigned i = stamped_; i < n_; ++i) finish_frame(at(i), crc_, ts);
    bool busy;
    int err;
    unsigned consumed = unsigned(sender_.send(at(0), n_, &busy, &err));
    tally_.sent(consumed);
    if (err) {  // e.g. ECONNREFUSED: no receiver; the frame is lost on the link
      counter_add(tally_.link_errors);
      ++consumed;
    }
    shift(consumed);
    if (busy) sock_.wait_writable(1);  // the socket buffer is full: give it a moment
  }
  std::uint64_t pending() const { return n_; }
  std::uint64_t drop_pending(std::uint64_t k) {
    const unsigned d = unsigned(std::min<std::uint64_t>(k, n_));
    shift(d);
    return d;
  }
  std::uint64_t free_frames() const { return 0; }  // the receiver's free socket buffer is unknown here
  bool full(std::uint64_t) const { return n_ > 0; }
  void idle_until(std::uint64_t t) { sleep_until_ns(t); }
  template <class Build>
  void finish(Build&& build_last, std::uint64_t deadline) {
    while (n_ > 0 && now_ns() < deadline) end_batch(true);
    n_ = stamped_ = 0;
    std::uint8_t* p = at(0);
    std::size_t len = build_last(p);
    int error = 0;
    tally_.sent(send_with_retry(sock_, 1, deadline, nullptr, &error, [&](unsigned, bool* busy, int* err) {
      finish_frame(p, crc_, now_ns());  // stamped at each attempt: the send time is when it left
      return unsigned(udp_send_batch(sock_.fd(), &p, &len, 1, busy, err));
    }));
  }

 private:
  std::uint8_t* at(unsigned i) { return buf_.data() + std::size_t(i) * flen_; }
  void shift(unsigned k) {
    if (k == 0) return;
    n_ -= k;
    if (n_) std::memmove(at(0), at(k), std::size_t(n_) * flen_);
    stamped_ = n_;  // what stays was stamped when first offered
  }
  UdpSocket& sock_;
  bool crc_;
  std::uint32_t flen_;
  unsigned cap_;
  std::vector<std::uint8_t> buf_;
  UdpSender sender_;
  LinkTally tally_;
  unsigned n_ = 0, stamped_ = 0;
};

// TCP: frames into the core's FrameSink, which keeps what the connection does not take
// yet (the socket's send buffer is full: the receiver is slow) as pending frames, the
// device FIFO's backlog; overflow discards the oldest of them (never one begun).
class TcpSinkLink {
 public:
  TcpSinkLink(FrameSink& sink, LinkTally tally) : sink_(sink), tally_(tally) {}

  std::uint8_t* acquire() { return sink_.acquire(0); }
  void commit(std::uint32_t len) { sink_.commit(len); }
  bool batch_full() const { return sink_.pending() + 2 > sink_.batch_capacity(); }  // a pair always fits
  bool room_for(unsigned k) const { return sink_.pending() + k <= sink_.batch_capacity(); }
  void end_batch(bool) {
    if (sink_.pending() == 0) return;
    const unsigned sent = sink_.send_some(now_ns());
    tally_.sent(sent);
    if (sink_.error()) {  // the connection broke: the receiver is gone, the frames are lost on the link
      counter_add(tally_.link_errors);
      return;
    }
    if (sink_.pending()) sink_.wait_writable(1);  // the send buffer is full: give it a moment
  }
  std::uint64_t pending() const { return sink_.pending(); }
  std::uint64_t drop_pending(std::uint64_t k) { return sink_.drop_pending(unsigned(std::min<std::uint64_t>(k, ~0u))); }
  std::uint64_t free_frames() const { return 0; }  // the receiver's free buffer is unknown here
  bool full(std::uint64_t) const { return sink_.pending() > 0; }
  void idle_until(std::uint64_t t) { sleep_until_ns(t); }
  template <class Build>
  void finish(Build&& build_last, std::uint64_t deadline) {
    while (sink_.pending() && !sink_.error() && now_ns() < deadline) end_batch(true);
    sink_.drop_pending(sink_.pending());
    if (std::uint8_t* p = sink_.acquire(0)) {
      sink_.commit(build_last(p));
      tally_.sent(sink_.flush(deadline));
    }
  }

 private:
  FrameSink& sink_;
  LinkTally tally_;
};

// Shared memory: each frame is built in place in a free slot and published with one
// head store per batch. The send time stamp is re-read after every 64 KiB built, not
// per frame: at 256-byte frames a clock read per frame cost more than building the
// frame, and the stamp stays within the few microseconds 64 KiB take to build.
class ShmRingLink {
 public:
  ShmRingLink(ShmProducer& ring, const StreamConfig& cfg, LinkTally tally) : ring_(ring), crc_(cfg.crc), tally_(tally) {}

  std::uint8_t* acquire() { return slot_ = ring_.acquire(); }
  void commit(std::uint32_t len) {
    if (fresh_ || (built_ += len) >= kRestampBytes) {
      stamp_ns_ = now_ns();
      built_ = 0;
      fresh_ = false;
    }
    finish_frame(slot_, crc_, stamp_ns_);
    ring_.publish_deferred(len);
    tally_.sent(1);
    ++done_;
  }
  bool batch_full() const { return done_ >= kBatch; }
  bool room_for(unsigned k) { return ring_.free_slots() >= k; }
  void end_batch(bool more_due) {
    ring_.flush_published();
    // Ring full: wait on the futex for room; the slot is taken by the next acquire().
    if (more_due && done_ < kBatch) static_cast<void>(ring_.acquire_wait(500'000));
    done_ = 0;
    fresh_ = true;
  }
  std::uint64_t pending() const { return 0; }
  std::uint64_t drop_pending(std::uint64_t) { return 0; }
  std::uint64_t free_frames() { return ring_.free_slots(); }
  bool full(std::uint64_t free) const { return free == 0; }
  void idle_until(std::uint64_t t) { sleep_until_ns(t); }
  template <class Build>
  void finish(Build&& build_last, std::uint64_t deadline) {
    ring_.flush_published();
    const std::uint64_t t = now_ns();
    if (std::uint8_t* slot = ring_.acquire_wait(deadline > t ? deadline - t : 0)) {
      const std::uint32_t len = build_last(slot);
      finish_frame(slot, crc_, now_ns());
      ring_.publish(len);
      tally_.sent(1);
    }
  }

 private:
  static constexpr unsigned kBatch = 32;
  static constexpr std::uint64_t kRestampBytes = 64 * 1024;
  ShmProducer& ring_;
  bool crc_;
  LinkTally tally_;
  std::uint8_t* slot_ = nullptr;
  unsigned done_ = 0;
  std::uint64_t stamp_ns_ = 0, built_ = 0;
  bool fresh_ = true;
};

// USB: the device end of the simulator's USB link. Frames are built into the device
// FIFO (this link's buffer); the bus model (hilrig/usb/usb_bus_model.hpp, stepped up to
// the wall clock on every pass) moves them into the IN transfers the host queued over
// the shared channel (hilrig/usb/usb_sim_channel.hpp) and completes each transfer when its
// last packet went, so a host with no IN transfer queued leaves the FIFO filling, and
// run_rx overflows it (the newest frames, not yet built, are lost: like an FX3's
// buffers, the device has nowhere to put them). OUT transfers are handed to the
// device frame by frame when the bus has moved them (service_out), through the
// model's OUT FIFO draining at the stream's rate (full: NAK, the host waits).
class UsbSimLink {
 public:
  // fifo_bytes: the device FIFO of the OUT direction (the IN FIFO is run_rx's).
  UsbSimLink(UsbSimDeviceEnd& ch, const StreamConfig& cfg, LinkTally tally, std::uint64_t fifo_bytes);

  std::uint8_t* acquire() {
    if (tail_ + flen_ > buf_.size()) make_room();
    return buf_.data() + tail_;
  }
  void commit(std::uint32_t len) {
    finish_frame(buf_.data() + tail_, crc_, now_ns());
    tail_ += len;
    model_.feed_in(len);
    ++built_;
  }
  bool batch_full() const { return built_ >= kBatch; }
  bool room_for(unsigned) const { return true; }
  void end_batch(bool more_due);
  std::uint64_t pending() const { return (tail_ - head_) / flen_; }
  // Overflow loses the newest frames (run_rx skips the ones not built yet): a frame
  // in the FIFO may already be half on the bus.
  std::uint64_t drop_pending(std::uint64_t) { return 0; }
  std::uint64_t free_frames() const { return 0; }
  bool full(std::uint64_t) const { return true; }  // the bus or the host's transfers are why
  void idle_until(std::uint64_t t);
  template <class Build>
  void finish(Build&& build_last, std::uint64_t deadline) {
    while (pending() && now_ns() < deadline) idle_until(std::min(deadline, now_ns() + kPassNs));
    // The last frame (EOB) goes out in the transfer being filled, which the device
    // ends early with a short packet (a whole number of frames: not a short transfer).
    std::uint8_t* p = acquire();
    commit(build_last(p));
    end_short();
  }
  // TX: a pass of the link; on_frame(p, len) for every frame of each OUT transfer the
  // bus finished. Returns whether anything happened (else it slept a pass).
  template <class OnFrame>
  bool service_out(OnFrame&& on_frame) {
    auto frames = [&](const std::uint8_t* p, std::uint32_t len) {
      for (std::uint32_t off = 0; off + flen_ <= len; off += flen_) on_frame(p + off, flen_);
    };
    if (shared_out_) {  // rx+tx: the RX thread steps the bus; this thread takes what it moved
      std::deque<std::vector<std::uint8_t>> ready;
      {
        std::lock_guard<std::mutex> lock(out_mu_);
        ready.swap(out_ready_);
      }
      for (const auto& t : ready) frames(t.data(), std::uint32_t(t.size()));
      if (ready.empty()) sleep_for_ns(kPassNs);
      return !ready.empty();
    }
    const bool moved = service(frames);
    if (!moved) sleep_for_ns(kPassNs);
    return moved;
  }
  // rx+tx: one bus for both directions. The RX thread (run_rx) alone steps it and
  // keeps each finished OUT transfer's data for service_out on the TX thread, so the
  // two threads share nothing but that queue.
  void set_shared_out() { shared_out_ = true; }

 private:
  static constexpr unsigned kBatch = 32;
  static constexpr std::uint64_t kPassNs = 50'000;  // an idle pass waits this long (the model keeps real time regardless)
  // What the RX side's passes do with a finished OUT transfer: nothing (rx), or keep
  // it for the TX thread (rx+tx).
  struct NoOut {
    UsbSimLink* link;
    void operator()(const std::uint8_t* p, std::uint32_t len) const {
      if (!link->shared_out_) return;
      std::lock_guard<std::mutex> lock(link->out_mu_);
      link->out_ready_.emplace_back(p, p + len);
    }
  };
  // Takes submissions, steps the bus to now, completes what finished. out(p, len) gets
  // each finished OUT transfer's data. True when something was submitted or finished.
  template <class Out>
  bool service(Out&& out);
  bool take_submissions();
  // Completes a finished (or cancelled) transfer back to the host.
  bool complete(const UsbBusModel::Done& d);
  void end_short();
  void make_room();
  std::uint64_t slot_at(std::uint64_t ns) const { return ns > t0_ns_ ? std::uint64_t(double(ns - t0_ns_) / slot_ns_) : 0; }

  UsbSimDeviceEnd& ch_;
  UsbBusModel model_;
  bool crc_;
  std::uint32_t flen_;
  LinkTally tally_;
  std::vector<std::uint8_t> buf_;  // the device IN FIFO: frames [head_, tail_)
  std::uint64_t head_ = 0, tail_ = 0;
  unsigned built_ = 0;
  std::vector<std::vector<std::uint8_t>> out_data_;  // by tag: an OUT transfer's data until the bus has moved it
  std::vector<std::uint8_t> cancelled_;              // by tag (x2: IN, OUT): the host took it back
  std::vector<std::uint32_t> in_len_;                // by tag: an IN transfer's length
  std::uint64_t t0_ns_;
  double slot_ns_;
  bool shared_out_ = false;
  std::mutex out_mu_;
  std::deque<std::vector<std::uint8_t>> out_ready_;  // rx+tx: finished OUT transfers for the TX thread
};

template <class Out>
bool UsbSimLink::service(Out&& out) {
  bool moved = take_submissions();
  const std::uint64_t target = slot_at(now_ns());
  auto& done = model_.completions();
  while (model_.slots() < target || !done.empty()) {
    while (done.empty() && model_.slots() < target) model_.step_slot();
    std::vector<UsbBusModel::Done> batch;
    batch.swap(done);
    for (const auto& d : batch) {
      if (!d.in && d.tag < out_data_.size() && !cancelled_[2 * d.tag + 1]) out(out_data_[d.tag].data(), std::uint32_t(d.bytes));
      moved |= complete(d);
    }
  }
  built_ = 0;
  return moved;
}

}  // namespace hilrig
