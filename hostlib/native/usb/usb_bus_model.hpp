// Timing model of a USB bulk link, stepped one 125 us (micro)frame at a time: the
// bus the simulator's USB link will move frames over (docs/usb.md has every
// parameter and where its figure is published). It models what limits a bulk stream
// on a real bus: the packets a (micro)frame holds, whether IN and OUT share them
// (USB 2 high speed is one half-duplex bus; USB 3 SuperSpeed has a lane per
// direction), one transfer at a time per endpoint in submission order, the host's
// completion cost before a finished transfer is queued again, and the device's FIFO
// (IN: fills at the device rate and overflows when no IN transfer takes it; OUT:
// drains at the device rate and underruns when OUT starves).
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "hilrig/core/config.hpp"

namespace hilrig {

enum class UsbLinkKind : std::uint8_t { usb2, usb3 };

struct UsbBusParams {
  double microframe_s = 125e-6;             // bus interval: 125 us (USB 2.0 §8.4.3.1, USB 3.x bus interval)
  std::uint32_t packets_per_microframe = 13; // bulk data packets per interval (per lane when !half_duplex)
  std::uint32_t max_packet_bytes = 512;      // wMaxPacketSize of a bulk endpoint
  bool half_duplex = true;                   // IN and OUT share the packets (USB 2)
  double completion_s = 40e-6;               // host cost from a transfer's last packet to its resubmission

  static UsbBusParams usb2();  // 13 x 512 B per 125 us = 53.248 MB/s, shared
  static UsbBusParams usb3();  // 61 x 1024 B per 125 us = 499.7 MB/s per direction
  static UsbBusParams for_link(UsbLinkKind k) { return k == UsbLinkKind::usb2 ? usb2() : usb3(); }
  // Bytes per second one direction carries with the bus to itself.
  double capacity_bytes_per_s() const { return double(packets_per_microframe) * max_packet_bytes / microframe_s; }
};

// Parses "usb2" / "usb3"; throws std::invalid_argument naming what is allowed.
UsbLinkKind parse_usb_link_kind(const std::string& s);

// One direction's stream as the host sets it up and the device feeds/drains it.
struct UsbDirectionSetup {
  bool enabled = false;
  std::uint32_t transfer_bytes = defaults::kUsbTransferBytes;  // S
  std::uint32_t transfers = defaults::kUsbTransfers;           // N in flight
  double device_rate_bytes_per_s = 0;    // the device produces (IN) / consumes (OUT) this; 0 = as fast as the bus
  std::uint64_t device_fifo_bytes = 0;   // device FIFO; 0 = unbounded (never overflows/underruns)
};

struct UsbDirectionStats {
  std::uint64_t bytes = 0;            // moved over the bus
  std::uint64_t transfers_done = 0;
  std::uint64_t packets = 0;
  std::uint64_t overflow_bytes = 0;   // IN: produced while the FIFO was full (lost)
  std::uint64_t overflow_events = 0;  // IN: times the FIFO went from fitting to overflowing
  std::uint64_t underrun_events = 0;  // OUT: times the device wanted data and the FIFO was empty
  std::uint64_t fifo_peak_bytes = 0;
};

class UsbBusModel {
 public:
  // Steady state: each direction keeps setup.transfers queued, each requeued after the
  // completion cost (what a host engine with N in flight does).
  UsbBusModel(const UsbBusParams& p, const UsbDirectionSetup& in, const UsbDirectionSetup& out);
  // Driven from outside: transfers are submitted (submit) and come back through
  // completions(); the host's completion cost is then whatever the host takes.
  explicit UsbBusModel(const UsbBusParams& p);
  struct Done {
    bool in;
    std::uint64_t tag;
    std::uint64_t bytes;
  };
  // ready_at_slot: when the host queued it (default now; a host running behind the
  // model's clock queues it at its own time, so a slow host is not given bus time back).
  void submit(bool in, std::uint64_t bytes, std::uint64_t tag, std::uint64_t ready_at_slot = 0);
  // Takes a queued transfer back (not yet finished): true when it was queued.
  bool cancel(bool in, std::uint64_t tag);
  std::vector<Done>& completions() { return done_; }
  // The device behind a direction: produces (IN) / consumes (OUT) rate bytes/s through a
  // FIFO of fifo_bytes (0 = unbounded); rate 0 = always has data / room.
  void set_device(bool in, double rate_bytes_per_s, std::uint64_t fifo_bytes);
  // The IN device's FIFO fed from outside (the simulator's USB link builds its frames
  // into it): an IN packet moves only bytes fed (the device NAKs until it has a
  // packet, or the rest of the transfer), and nothing is produced at a rate here.
  void set_in_fed() { in_.fed = true; }
  void feed_in(std::int64_t bytes) { in_.fifo = std::max(0.0, in_.fifo + double(bytes)); }
  // The transfer the endpoint is moving now (the oldest queued): false when none.
  bool front(bool in, std::uint64_t* tag) const {
    const auto& q = (in ? in_ : out_).queue;
    if (q.empty()) return false;
    *tag = q.front().tag;
    return true;
  }
  // Advances one packet slot / one bus interval.
  void step_slot();
  void step();
  std::uint64_t slots() const { return slots_; }
  double slot_s() const { return p_.microframe_s / p_.packets_per_microframe; }
  // Advances whole intervals until `seconds` of bus time have passed.
  void run_for(double seconds);
  double now_s() const { return double(slots_) * p_.microframe_s / p_.packets_per_microframe; }
  const UsbDirectionStats& in() const { return in_.stats; }
  const UsbDirectionStats& out() const { return out_.stats; }
  const UsbBusParams& params() const { return p_; }

 private:
  struct Transfer {
    std::uint64_t left;      // bytes still to move
    std::uint64_t ready_at;  // slot from which the host has it queued
    std::uint64_t tag = 0, size = 0;
  };
  struct Dir {
    UsbDirectionSetup setup;
    std::deque<Transfer> queue;  // the endpoint's transfers in submission order
    double fifo = 0;             // device FIFO level, bytes (IN: data waiting; OUT: data held)
    bool overflowing = false, starving = false, started = false, fed = false;
    UsbDirectionStats stats;
  };
  // Moves one packet of d if it may go now; false when it cannot (no ready transfer or no data).
  bool packet(Dir& d, bool is_in);
  void device_side(Dir& d, bool is_in);

  UsbBusParams p_;
  Dir in_, out_;
  std::uint64_t slots_ = 0;             // packet slots elapsed (interval / packets_per_microframe each)
  std::uint64_t completion_slots_ = 0;  // the completion cost in slots
  bool in_turn_ = true;                 // half duplex: whose turn the next slot is (round robin across intervals)
  bool steady_ = true;                  // requeue finished transfers itself (else report them in done_)
  std::vector<Done> done_;
};

}  // namespace hilrig
