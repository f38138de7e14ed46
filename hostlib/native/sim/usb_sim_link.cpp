// The simulator's USB link (hilrig/sim/sim_link.hpp UsbSimLink): its non-template parts.
#include <cstring>

#include "hilrig/sim/sim_link.hpp"
#include "hilrig/usb/usb_engine.hpp"

namespace hilrig {

UsbSimLink::UsbSimLink(UsbSimDeviceEnd& ch, const StreamConfig& cfg, LinkTally tally, std::uint64_t fifo_bytes)
    : ch_(ch), model_(UsbBusParams::for_link(parse_usb_link_kind(cfg.transport.link))), crc_(cfg.crc),
      flen_(std::uint32_t(kFrameHeaderBytes) + cfg.payload_bytes()), tally_(tally), t0_ns_(now_ns()),
      slot_ns_(model_.slot_s() * 1e9) {
  model_.set_in_fed();
  // OUT: the device drains whole frames at the stream's rate through its FIFO.
  model_.set_device(false, cfg.rate_sps / cfg.samples_per_frame() * flen_, fifo_bytes);
  buf_.resize(std::size_t(flen_) * 64);
}

void UsbSimLink::make_room() {
  if (head_ > 0 && head_ >= tail_ - head_) {  // the live part is smaller than what was consumed: slide it down
    std::memmove(buf_.data(), buf_.data() + head_, tail_ - head_);
    tail_ -= head_;
    head_ = 0;
  }
  if (tail_ + flen_ > buf_.size()) buf_.resize(std::max<std::size_t>(buf_.size() * 2, tail_ + flen_));
}

bool UsbSimLink::take_submissions() {
  ShmConsumer& ring = ch_.submissions();
  bool any = false;
  std::uint32_t len = 0;
  while (const std::uint8_t* p = ring.peek(&len)) {
    UsbSimDesc d;
    std::memcpy(&d, p, sizeof d);
    if (cancelled_.size() < 2 * (std::size_t(d.tag) + 1)) {
      cancelled_.resize(2 * (std::size_t(d.tag) + 1), 0);
      out_data_.resize(std::size_t(d.tag) + 1);
      in_len_.resize(std::size_t(d.tag) + 1, 0);
    }
    const bool in = d.op == UsbSimDesc::kSubmitIn || (d.op == UsbSimDesc::kCancel && d.in);
    std::uint8_t& cancelled = cancelled_[2 * d.tag + (in ? 0 : 1)];
    if (d.op == UsbSimDesc::kCancel) {
      // The model hands a cancelled transfer back through its completions; complete() drops it.
      cancelled = model_.cancel(in, d.tag) ? 1 : 0;
    } else {
      cancelled = 0;
      if (in) in_len_[d.tag] = d.length;
      if (!in) out_data_[d.tag].assign(p + kUsbSimDescBytes, p + kUsbSimDescBytes + std::min(d.length, len - kUsbSimDescBytes));
      model_.submit(in, d.length, d.tag, slot_at(d.submit_ns));
    }
    ring.release();
    any = true;
  }
  return any;
}

bool UsbSimLink::complete(const UsbBusModel::Done& d) {
  std::uint64_t bytes = d.bytes;
  if (d.in) bytes = std::min<std::uint64_t>(bytes, tail_ - head_);
  if (cancelled_[2 * d.tag + (d.in ? 0 : 1)]) {
    // The host has it back already. IN bytes the bus moved into it are lost, with
    // the rest of the frame they cut (the FIFO keeps whole frames).
    if (d.in && bytes) {
      const std::uint64_t whole = std::min<std::uint64_t>((bytes + flen_ - 1) / flen_ * flen_, tail_ - head_);
      head_ += whole;
      model_.feed_in(-std::int64_t(whole - bytes));
    }
    return false;
  }
  std::uint8_t* slot = ch_.completions().acquire_wait(10'000'000);
  if (d.in) {
    if (slot) std::memcpy(slot + kUsbSimDescBytes, buf_.data() + head_, bytes);
    head_ += bytes;
    if (head_ == tail_) head_ = tail_ = 0;
    tally_.sent(bytes / flen_);
  }
  if (!slot) {  // the host does not take completions (gone or stuck): the transfer is lost
    counter_add(tally_.link_errors);
    return true;
  }
  UsbSimDesc c;
  c.op = UsbSimDesc::kComplete;
  c.status = std::uint8_t(UsbStatus::completed);
  c.in = d.in;
  c.tag = std::uint32_t(d.tag);
  c.actual = std::uint32_t(bytes);
  std::memcpy(slot, &c, sizeof c);
  ch_.completions().publish(kUsbSimDescBytes + (d.in ? std::uint32_t(bytes) : 0));
  return true;
}

void UsbSimLink::end_batch(bool more_due) {
  const bool moved = service(NoOut{this});
  if (!moved && !more_due) sleep_for_ns(kPassNs);
}

void UsbSimLink::idle_until(std::uint64_t t) {
  for (;;) {
    service(NoOut{this});
    const std::uint64_t now = now_ns();
    if (now >= t) return;
    sleep_for_ns(std::min<std::uint64_t>(t - now, kPassNs));
  }
}

void UsbSimLink::end_short() {
  service(NoOut{this});
  std::uint64_t tag;
  if (!model_.front(true, &tag)) return;  // no IN transfer queued: the last frame has nowhere to go
  // The device ends the transfer it is filling with a short packet: whole frames the
  // FIFO holds, up to the transfer's length.
  model_.cancel(true, tag);
  auto& done = model_.completions();
  for (auto it = done.begin(); it != done.end(); ++it)
    if (it->in && it->tag == tag) {
      done.erase(it);
      break;
    }
  const std::uint64_t bytes = std::min<std::uint64_t>(in_len_[tag], tail_ - head_) / flen_ * flen_;
  complete(UsbBusModel::Done{true, tag, bytes});
}

}  // namespace hilrig
