#include "hilrig/usb/usb_sim_backend.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "hilrig/core/clock.hpp"

namespace hilrig {
namespace {
constexpr std::uint64_t kAliveCheckNs = 50'000'000;  // how often an idle host looks whether the simulator lives
}

UsbSimBackend::UsbSimBackend(UsbLinkKind link, const nlohmann::json& ep)
    : ch_(ep), max_packet_(UsbBusParams::for_link(link).max_packet_bytes) {
  name_ = std::string("simulated ") + (link == UsbLinkKind::usb2 ? "usb2" : "usb3") + " device hilrig-sim";
  if (ep.contains("pid")) name_ += " (pid " + std::to_string(ep["pid"].get<long long>()) + ")";
}

void UsbSimBackend::prepare(UsbTransfer& t, Completion done, void* engine) {
  done_ = done;
  engine_ = engine;
  t.backend_handle = this;
  if (by_tag_.size() <= t.index) {
    by_tag_.resize(t.index + 1, nullptr);
    live_.resize(t.index + 1, false);
  }
  by_tag_[t.index] = &t;
  if (t.length > ch_.transfer_bytes())
    throw std::invalid_argument(name_ + ": transfer_bytes " + std::to_string(t.length) + " is larger than the link was configured for (" +
                                std::to_string(ch_.transfer_bytes()) + ")");
}

bool UsbSimBackend::gone(std::uint64_t now) {
  if (!gone_ && now >= next_alive_check_ns_) {
    next_alive_check_ns_ = now + kAliveCheckNs;
    gone_ = ch_.peer_gone();
  }
  return gone_;
}

UsbStatus UsbSimBackend::submit(UsbTransfer& t) {
  const std::uint64_t now = now_ns();
  if (gone(now)) return UsbStatus::no_device;
  std::uint8_t* slot = ch_.submissions().acquire_wait(100'000'000);
  if (!slot) return gone(0) ? UsbStatus::no_device : UsbStatus::error;
  UsbSimDesc d;
  d.in = (t.endpoint & 0x80) ? 1 : 0;
  d.op = d.in ? UsbSimDesc::kSubmitIn : UsbSimDesc::kSubmitOut;
  d.tag = std::uint32_t(t.index);
  d.length = t.length;
  d.submit_ns = now;
  std::memcpy(slot, &d, sizeof d);
  std::uint32_t len = kUsbSimDescBytes;
  if (!d.in) {
    std::memcpy(slot + kUsbSimDescBytes, t.buffer, t.length);
    len += t.length;
  }
  ch_.submissions().publish(len);
  live_[t.index] = true;
  return UsbStatus::completed;
}

void UsbSimBackend::cancel(UsbTransfer& t) {
  if (!live_[t.index]) return;
  live_[t.index] = false;
  cancelled_.push_back(&t);
  // Tell the device side to drop it (best effort: a full ring or a dead simulator
  // changes nothing here, the transfer is over for the host either way).
  if (std::uint8_t* slot = ch_.submissions().acquire()) {
    UsbSimDesc d;
    d.op = UsbSimDesc::kCancel;
    d.in = (t.endpoint & 0x80) ? 1 : 0;
    d.tag = std::uint32_t(t.index);
    std::memcpy(slot, &d, sizeof d);
    ch_.submissions().publish(kUsbSimDescBytes);
  }
}

void UsbSimBackend::finish(UsbTransfer& t, UsbStatus s, std::uint32_t actual) {
  t.status = s;
  t.actual = actual;
  done_(engine_, t);
}

void UsbSimBackend::handle_events(std::uint32_t timeout_us) {
  if (!cancelled_.empty()) {
    std::vector<UsbTransfer*> batch;
    batch.swap(cancelled_);
    for (UsbTransfer* t : batch) finish(*t, UsbStatus::cancelled, 0);
    return;
  }
  const std::uint64_t deadline = now_ns() + std::uint64_t(timeout_us) * 1000;
  ShmConsumer& ring = ch_.completions();
  for (;;) {
    const std::uint64_t now = now_ns();
    std::uint32_t len = 0;
    const std::uint8_t* p = ring.peek_wait(&len, std::min<std::uint64_t>(deadline > now ? deadline - now : 0, kAliveCheckNs));
    if (p) {
      // Everything that is there now, then back to the engine.
      do {
        UsbSimDesc d;
        std::memcpy(&d, p, sizeof d);
        if (d.tag < by_tag_.size() && live_[d.tag]) {
          UsbTransfer& t = *by_tag_[d.tag];
          const std::uint32_t actual = std::min(d.actual, t.length);
          if (d.in && actual) std::memcpy(t.buffer, p + kUsbSimDescBytes, actual);
          live_[d.tag] = false;
          ring.release();
          finish(t, UsbStatus(d.status), actual);
        } else {
          ring.release();  // a transfer the host already cancelled
        }
      } while ((p = ring.peek(&len)) != nullptr);
      return;
    }
    if (gone(now_ns())) {
      // The simulator died: every transfer still out ends with no device.
      for (std::size_t i = 0; i < live_.size(); ++i)
        if (live_[i]) {
          live_[i] = false;
          finish(*by_tag_[i], UsbStatus::no_device, 0);
        }
      return;
    }
    if (now_ns() >= deadline) return;
  }
}

}  // namespace hilrig
