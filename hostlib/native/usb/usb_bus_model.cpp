#include "hilrig/usb/usb_bus_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hilrig {

UsbBusParams UsbBusParams::usb2() {
  UsbBusParams p;  // the defaults are USB 2 high speed
  return p;
}

UsbBusParams UsbBusParams::usb3() {
  UsbBusParams p;
  p.packets_per_microframe = 61;  // floor(500 MB/s x 125 us / 1024 B)
  p.max_packet_bytes = 1024;
  p.half_duplex = false;
  return p;
}

UsbLinkKind parse_usb_link_kind(const std::string& s) {
  if (s == "usb2") return UsbLinkKind::usb2;
  if (s == "usb3") return UsbLinkKind::usb3;
  throw std::invalid_argument("usb link: must be \"usb2\" (high speed, 480 Mbit/s) or \"usb3\" (SuperSpeed, 5 Gbit/s), got \"" +
                              s + "\"");
}

// Time is counted in packet slots: an interval holds packets_per_microframe of them
// (per lane on a dual-simplex bus), so a transfer's completion cost can be shorter
// than an interval (40 us = 5 slots of 9.6 us at high speed).
UsbBusModel::UsbBusModel(const UsbBusParams& p, const UsbDirectionSetup& in, const UsbDirectionSetup& out) : p_(p) {
  if (p_.packets_per_microframe == 0 || p_.max_packet_bytes == 0 || !(p_.microframe_s > 0))
    throw std::invalid_argument("usb bus model: packets_per_microframe, max_packet_bytes and microframe_s must be > 0");
  const double slot_s = p_.microframe_s / p_.packets_per_microframe;
  completion_slots_ = std::uint64_t(std::ceil(p_.completion_s / slot_s));  // in slots
  in_.setup = in;
  out_.setup = out;
  for (Dir* d : {&in_, &out_})
    if (d->setup.enabled)
      for (std::uint32_t i = 0; i < d->setup.transfers; ++i) d->queue.push_back({d->setup.transfer_bytes, 0});
}

UsbBusModel::UsbBusModel(const UsbBusParams& p) : UsbBusModel(p, UsbDirectionSetup{}, UsbDirectionSetup{}) {
  steady_ = false;
  in_.setup.enabled = out_.setup.enabled = true;
  in_.setup.transfers = out_.setup.transfers = 0;
}

void UsbBusModel::set_device(bool in, double rate_bytes_per_s, std::uint64_t fifo_bytes) {
  Dir& d = in ? in_ : out_;
  d.setup.device_rate_bytes_per_s = rate_bytes_per_s;
  d.setup.device_fifo_bytes = fifo_bytes;
}

void UsbBusModel::submit(bool in, std::uint64_t bytes, std::uint64_t tag, std::uint64_t ready_at_slot) {
  (in ? in_ : out_).queue.push_back({bytes, std::max(slots_, ready_at_slot), tag, bytes});
}

bool UsbBusModel::cancel(bool in, std::uint64_t tag) {
  auto& q = (in ? in_ : out_).queue;
  for (auto it = q.begin(); it != q.end(); ++it)
    if (it->tag == tag) {
      done_.push_back({in, tag, it->size - it->left});
      q.erase(it);
      return true;
    }
  return false;
}

void UsbBusModel::device_side(Dir& d, bool is_in) {
  const double rate = d.setup.device_rate_bytes_per_s;
  if (!d.setup.enabled || rate <= 0) return;
  const double slot_s = p_.microframe_s / p_.packets_per_microframe;
  const double cap = d.setup.device_fifo_bytes ? double(d.setup.device_fifo_bytes) : 1e300;
  if (is_in) {
    d.fifo += rate * slot_s;
    if (d.fifo > cap) {
      d.stats.overflow_bytes += std::uint64_t(d.fifo - cap);
      if (!d.overflowing) ++d.stats.overflow_events;
      d.overflowing = true;
      d.fifo = cap;
    } else {
      d.overflowing = false;
    }
  } else if (d.started) {
    const double want = rate * slot_s;
    if (d.fifo + 1e-9 < want) {
      if (!d.starving) ++d.stats.underrun_events;
      d.starving = true;
      d.fifo = 0;
    } else {
      d.starving = false;
      d.fifo -= want;
    }
  }
  d.stats.fifo_peak_bytes = std::max(d.stats.fifo_peak_bytes, std::uint64_t(d.fifo));
}

bool UsbBusModel::packet(Dir& d, bool is_in) {
  if (!d.setup.enabled || d.queue.empty()) return false;
  // Slot clock: slots_ counts slots here (see step()).
  Transfer& t = d.queue.front();
  if (t.ready_at > slots_) return false;
  std::uint64_t n = std::min<std::uint64_t>(p_.max_packet_bytes, t.left);
  const bool paced = d.setup.device_rate_bytes_per_s > 0 || d.fed;
  if (is_in && paced) {
    if (d.fifo < double(n)) return false;  // the device NAKs until it has a whole packet
    d.fifo -= double(n);
  } else if (!is_in && paced) {
    if (d.setup.device_fifo_bytes && d.fifo + double(n) > double(d.setup.device_fifo_bytes)) return false;  // NAK: full
    d.fifo += double(n);
    d.started = true;
  }
  t.left -= n;
  d.stats.bytes += n;
  ++d.stats.packets;
  if (t.left == 0) {
    ++d.stats.transfers_done;
    if (steady_) {
      d.queue.pop_front();
      d.queue.push_back({d.setup.transfer_bytes, slots_ + 1 + completion_slots_});
    } else {
      done_.push_back({is_in, t.tag, t.size});
      d.queue.pop_front();
    }
  }
  return true;
}

void UsbBusModel::step_slot() {
  // Half duplex: IN and OUT take turns for each slot (round robin, as a host
  // controller alternates endpoints); dual simplex: each direction has every slot of
  // its own lane.
  device_side(in_, true);
  device_side(out_, false);
  if (p_.half_duplex) {
    if (in_turn_) {
      if (!packet(in_, true)) packet(out_, false);
    } else if (!packet(out_, false)) {
      packet(in_, true);
    }
    in_turn_ = !in_turn_;
  } else {
    packet(in_, true);
    packet(out_, false);
  }
  ++slots_;
}

void UsbBusModel::step() {
  for (std::uint32_t s = 0; s < p_.packets_per_microframe; ++s) step_slot();
}

void UsbBusModel::run_for(double seconds) {
  const double slot_s = p_.microframe_s / p_.packets_per_microframe;
  const auto end = std::uint64_t(std::llround(seconds / slot_s));
  while (slots_ < end) step();
}

}  // namespace hilrig
