// The shared channel between the host's UsbEngine (UsbSimBackend, on a UsbSimHostEnd)
// and the simulator's USB link (UsbSimLink, on a UsbSimDeviceEnd): two shm rings
// (hilrig/io/shm_ring.hpp) in memfds the simulator creates. The host submits transfers (and cancels) on one; the simulator
// completes them on the other when the bus model (hilrig/usb/usb_bus_model.hpp) says they
// finish. Each slot is a UsbSimDesc followed by the transfer's data (OUT submissions,
// IN completions). The simulator holds an exclusive flock on the submit ring's memfd
// for as long as it lives: the kernel drops it when the process dies, so the host
// tells "the device is gone" from "the device is slow" without a heartbeat.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "hilrig/io/shm_ring.hpp"

namespace hilrig {

struct UsbSimDesc {
  enum Op : std::uint8_t { kSubmitIn = 1, kSubmitOut = 2, kCancel = 3, kComplete = 4 };
  std::uint8_t op = 0;
  std::uint8_t status = 0;  // kComplete: a UsbStatus
  std::uint8_t in = 0;      // kCancel / kComplete: 1 = IN
  std::uint8_t reserved = 0;
  std::uint32_t tag = 0;       // the engine's transfer index
  std::uint32_t length = 0;    // bytes asked for (IN) / to send (OUT)
  std::uint32_t actual = 0;    // kComplete: bytes moved
  std::uint64_t submit_ns = 0; // the host's now_ns() at submission (CLOCK_MONOTONIC, shared by both processes)
};
inline constexpr std::uint32_t kUsbSimDescBytes = 64;  // data starts 64-byte aligned after the descriptor
static_assert(sizeof(UsbSimDesc) <= kUsbSimDescBytes);

// The simulator's end: creates both rings, takes the host's submissions, completes
// transfers back, and holds the liveness lock for as long as it lives.
class UsbSimDeviceEnd {
 public:
  // Both rings sized for `transfers` per direction x `directions` (each slot:
  // descriptor + transfer_bytes). Throws std::runtime_error.
  UsbSimDeviceEnd(std::uint32_t transfer_bytes, std::uint32_t transfers, unsigned directions);
  // {"submit_path", "complete_path"}: what the host opens.
  nlohmann::json endpoint_json() const;
  ShmConsumer& submissions() { return submit_; }  // host -> simulator
  ShmProducer& completions() { return complete_; }  // simulator -> host

 private:
  ShmConsumer submit_;
  ShmProducer complete_;
};

// The host's end (UsbSimBackend): submits and cancels transfers, takes completions.
class UsbSimHostEnd {
 public:
  // Opens the rings the endpoint names ({"submit_path", "complete_path"}). Throws
  // std::invalid_argument (endpoint) / std::runtime_error (a ring).
  explicit UsbSimHostEnd(const nlohmann::json& endpoint);
  // True once the simulator's process has died (its lock is free).
  bool peer_gone() const;
  ShmProducer& submissions() { return submit_; }
  ShmConsumer& completions() { return complete_; }
  std::uint32_t transfer_bytes() const { return submit_.slot_bytes() - kUsbSimDescBytes; }

 private:
  ShmProducer submit_;
  ShmConsumer complete_;
};

}  // namespace hilrig
