#include "hilrig/usb/usb_model_backend.hpp"

#include <algorithm>

#include "hilrig/core/clock.hpp"

namespace hilrig {

UsbModelBackend::UsbModelBackend(UsbLinkKind link, const StreamConfig& device, std::uint64_t fifo_bytes)
    : model_(UsbBusParams::for_link(link)), cfg_(device), framer_(device), frame_len_(framer_.frame_len()),
      device_check_(device_rx_), slot_ns_(model_.slot_s() * 1e9),
      name_(std::string("simulated ") + (link == UsbLinkKind::usb2 ? "usb2" : "usb3") + " link") {
  if (fifo_bytes) {
    // Bytes on the bus per second: whole frames at the device's sample rate.
    const double bytes_per_s = device.rate_sps / double(device.samples_per_frame()) * double(frame_len_);
    model_.set_device(true, bytes_per_s, fifo_bytes);
    model_.set_device(false, bytes_per_s, fifo_bytes);
  }
}

nlohmann::json UsbModelBackend::device_stats() const {
  return {{"overflow_events", overflow_events_.load()}, {"overflow_frames", overflow_frames_.load()},
          {"underruns", underruns_.load()}, {"fifo_peak_bytes", fifo_peak_.load()}, {"tx", counters_json(device_rx_)}};
}

void UsbModelBackend::prepare(UsbTransfer& t, Completion done, void* engine) {
  done_ = done;
  engine_ = engine;
  t.backend_handle = this;
  if (by_tag_.size() <= t.index) by_tag_.resize(t.index + 1, nullptr);
  by_tag_[t.index] = &t;
}

std::uint64_t UsbModelBackend::real_slot(std::uint64_t now) const {
  return t0_ns_ ? std::uint64_t(double(now - t0_ns_) / slot_ns_) : 0;
}

UsbStatus UsbModelBackend::submit(UsbTransfer& t) {
  const std::uint64_t now = now_ns();
  if (!t0_ns_) t0_ns_ = now;
  model_.submit(t.endpoint & 0x80, t.length, t.index, real_slot(now));
  return UsbStatus::completed;
}

void UsbModelBackend::cancel(UsbTransfer& t) {
  if (model_.cancel(t.endpoint & 0x80, t.index)) cancelled_.insert(t.index);
}

// Steps the bus model up to real time, delivering each finished transfer as it
// finishes (the engine resubmits from the callback, at the then-current time).
void UsbModelBackend::handle_events(std::uint32_t timeout_us) {
  const std::uint64_t deadline = now_ns() + std::uint64_t(timeout_us) * 1000;
  for (;;) {
    const std::uint64_t now = now_ns();
    const std::uint64_t target = real_slot(now);
    auto& done = model_.completions();
    while (done.empty() && model_.slots() < target) model_.step_slot();
    if (!done.empty()) {
      std::vector<UsbBusModel::Done> batch;
      batch.swap(done);
      const std::uint64_t ts = now_ns();
      for (const auto& d : batch) {
        UsbTransfer& t = *by_tag_[d.tag];
        t.actual = std::uint32_t(d.bytes);
        t.status = UsbStatus::completed;
        if (cancelled_.erase(d.tag)) {
          t.status = UsbStatus::cancelled;
          t.actual = 0;
        } else if (d.in) {
          // The device sends whole frames of its stream; frames its FIFO had no room
          // for are gone (their seqs skipped) and the next frame says so.
          const std::uint64_t lost = model_.in().overflow_bytes / frame_len_;
          std::uint8_t flags = 0;
          if (lost > lost_frames_) {
            device_seq_ += lost - lost_frames_;
            lost_frames_ = lost;
            flags = kFlagOverflowBefore;
          }
          for (std::uint32_t off = 0; off + frame_len_ <= t.actual; off += frame_len_) {
            framer_.build(device_seq_++, flags, t.buffer + off);
            finish_frame(t.buffer + off, cfg_.crc, ts);
            flags = 0;
          }
        } else {
          FrameHeader h;
          for (std::uint32_t off = 0; off + frame_len_ <= t.actual; off += frame_len_)
            device_check_.on_frame(t.buffer + off, frame_len_, ts, &h);
          device_check_.on_batch_done(ts);
        }
        done_(engine_, t);
      }
      overflow_events_.store(model_.in().overflow_events, std::memory_order_relaxed);
      overflow_frames_.store(lost_frames_, std::memory_order_relaxed);
      underruns_.store(model_.out().underrun_events, std::memory_order_relaxed);
      fifo_peak_.store(std::max(model_.in().fifo_peak_bytes, model_.out().fifo_peak_bytes), std::memory_order_relaxed);
      return;
    }
    if (now >= deadline) return;
    // Caught up with real time and nothing finished: wait a little (a transfer takes
    // at least one packet slot; 50 us keeps the thread mostly asleep).
    sleep_until_ns(std::min(deadline, now + 50'000));
  }
}

}  // namespace hilrig
