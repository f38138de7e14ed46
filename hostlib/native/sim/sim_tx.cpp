// The simulator's TX side (host -> device) and loopback: frames from the link through
// the fault gate into the checker, the consumption clock (underruns), the loop back.
#include "hilrig/sim/sim_device.hpp"

#include <algorithm>
#include <netinet/udp.h>
#include <cstring>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/sim/fault_gate.hpp"
#include "hilrig/sim/playout_clock.hpp"
#include "hilrig/sim/sim_link.hpp"

namespace hilrig {

void SimDevice::run_tx() {
  const StreamConfig& cfg = cfg_.stream;
  const bool loop = cfg.direction == Direction::loopback;
  RxChecker check(*tx_);
  // USB: OUT transfers reach the device through the bus model, draining at the
  // stream's rate through a FIFO of fifo_frames (full: the bus NAKs, the host waits).
  std::unique_ptr<UsbSimLink> usb_own;
  UsbSimLink* usb_link = usb_shared_.get();  // rx+tx: the bus run_rx steps
  if (usb_ && !usb_link) {
    const LinkTally tally{frames_sent_, samples_sent_, link_errors_, cfg.samples_per_frame()};
    usb_own = std::make_unique<UsbSimLink>(*usb_, cfg, tally,
                                           std::uint64_t(cfg_.fifo_frames) * (kFrameHeaderBytes + cfg.payload_bytes()));
    usb_link = usb_own.get();
  }
  PlayoutClock& clock = *playout_;
  // Loopback RX side.
  std::uint64_t rx_seq = 0, rx_tick = 0;
  bool overflow_pending = false;
  std::vector<std::uint8_t> out(std::size_t(cfg.frame_bytes) + 64);

  auto loop_back = [&](const std::uint8_t* frame, const FrameHeader& in) {
    // Own RX seq/tick, the host's payload and its original send_time_ns (round trip).
    FrameHeader h = in;
    h.flags = std::uint8_t(kFlagTsValid | (rx_seq == 0 ? kFlagSOB : 0) | (overflow_pending ? kFlagOverflowBefore : 0) |
                           (in.flags & kFlagEOB));
    h.crc32c = 0;
    h.seq = rx_seq++;
    h.sample_tick = rx_tick;
    h.stream_id = cfg.stream_id;
    const std::uint64_t samples = in.payload_bytes / (bytes_per_sample(SampleFormat(in.sample_format)) * in.channels);
    rx_tick += samples;
    const std::size_t len = kFrameHeaderBytes + in.payload_bytes;
    if (usb_link) {  // over usb: into the link's IN FIFO, which the bus moves into the host's IN transfers
      // (the link counts frames sent as the bus moves them; it carries whole frames only)
      if (len != kFrameHeaderBytes + cfg.payload_bytes()) return;
      std::uint8_t* dst = usb_link->acquire();
      write_header(h, dst);
      std::memcpy(dst + kFrameHeaderBytes, frame + kFrameHeaderBytes, in.payload_bytes);
      usb_link->commit(std::uint32_t(len));
      return;
    }
    std::uint8_t* dst = rx_ring_ ? rx_ring_->acquire() : out.data();
    bool ok = false;
    if (dst && len <= (rx_ring_ ? rx_ring_->slot_bytes() : out.size())) {
      write_header(h, dst);
      std::memcpy(dst + kFrameHeaderBytes, frame + kFrameHeaderBytes, in.payload_bytes);
      if (cfg.crc) finish_frame(dst, true, in.send_time_ns);
      if (rx_ring_) {
        rx_ring_->publish(std::uint32_t(len));
        ok = true;
      } else {
        bool busy;
        int err;
        std::size_t l = len;
        ok = udp_send_batch(rx_sock_.fd(), &dst, &l, 1, &busy, &err) == 1;
        if (!ok && err) counter_add(link_errors_);
      }
    }
    if (ok) {
      counter_add(frames_sent_);
      counter_add(samples_sent_, samples);
      overflow_pending = false;
    } else {  // the RX link cannot take it: this frame overflows, its seq stays consumed
      if (!overflow_pending) counter_add(overflow_events_);
      overflow_pending = true;
      counter_add(overflow_frames_);
    }
  };

  auto deliver = [&](const std::uint8_t* p, std::size_t len, std::uint64_t now) {
    FrameHeader h;
    if (!check.on_frame(p, len, now, &h)) return;
    const std::uint64_t samples = h.payload_bytes / (bytes_per_sample(SampleFormat(h.sample_format)) * h.channels);
    clock.on_frame(now, samples, (h.flags & kFlagEOB) != 0);
    if (loop) loop_back(p, h);
  };

  TxFaultGate gate(plan_, cfg, {injected_drop_, injected_duplicate_, injected_reorder_, injected_corrupt_});
  auto on_frame = [&](const std::uint8_t* p, std::size_t len, std::uint64_t now) {
    gate.on_frame(p, len, [&](const std::uint8_t* q, std::size_t l) { deliver(q, l, now); });
  };

  while (!stop_.load(std::memory_order_relaxed)) {
    if (usb_link) {
      usb_link->service_out([&](const std::uint8_t* p, std::uint32_t len) { on_frame(p, len, now_ns()); });
    } else if (tx_in_->wait(2'000'000)) {
      const std::uint64_t now = now_ns();
      while (const FrameView f = tx_in_->take()) {
        if (f.malformed) counter_add(tx_->malformed_frames);
        else on_frame(f.data, f.len, now);
        tx_in_->release();
      }
    }
    check.flush();
    if (gate.take_stall()) {  // the device's consumer stops; the link backs up meanwhile
      const std::uint64_t from = now_ns(), until = from + plan_.stall_ns();
      while (!stop_.load(std::memory_order_relaxed) && now_ns() < until)
        sleep_for_ns(std::min<std::uint64_t>(until - now_ns(), 10'000'000));
      counter_add(injected_stalls_);
      counter_add(injected_stall_ns_, now_ns() - from);
    }
    if (clock.advance(now_ns())) counter_add(underruns_);
  }
  if (tx_in_) tx_in_->release_batch();
  if (gate.flush([&](const std::uint8_t* q, std::size_t l) { deliver(q, l, now_ns()); }))
    check.flush();  // a swapped frame whose successor never came
  if (loop) {
    // End of the looped-back RX stream: an empty frame flagged EOB.
    FrameHeader h;
    h.flags = std::uint8_t(kFlagTsValid | kFlagEOB | (overflow_pending ? kFlagOverflowBefore : 0));
    h.stream_id = cfg.stream_id;
    h.sample_format = std::uint8_t(cfg.sample_format);
    h.channels = std::uint8_t(cfg.channels);
    h.seq = rx_seq;
    h.sample_tick = rx_tick;
    h.send_time_ns = now_ns();
    if (usb_link) {
      // The link carries whole frames only: the host ends on its own (no EOB frame).
    } else if (rx_ring_) {
      if (std::uint8_t* s = rx_ring_->acquire_wait(100'000'000)) {
        write_header(h, s);
        rx_ring_->publish(std::uint32_t(kFrameHeaderBytes));
      }
    } else {
      write_header(h, out.data());
      send(rx_sock_.fd(), out.data(), kFrameHeaderBytes, MSG_DONTWAIT);
    }
  }
}

}  // namespace hilrig
