// The shared channel between the host's UsbEngine (UsbSimBackend) and the
// simulator's USB link (UsbSimLink): two shm rings (hilrig/io/shm_ring.hpp) in memfds the
// simulator creates. The host submits transfers (and cancels) on one; the simulator
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

class UsbSimChannel {
 public:
  // Simulator side: both rings, sized for `transfers` per direction x `directions`
  // (each slot: descriptor + transfer_bytes), and the liveness lock taken.
  static std::unique_ptr<UsbSimChannel> create(std::uint32_t transfer_bytes, std::uint32_t transfers, unsigned directions);
  // Host side: opens the rings the endpoint names ({"submit_path", "complete_path"}).
  static std::unique_ptr<UsbSimChannel> open(const nlohmann::json& endpoint);
  // {"submit_path", "complete_path"}
  nlohmann::json endpoint_json() const;
  // Host side: true once the simulator's process has died (its lock is free).
  bool peer_gone() const;
  ShmRing& submit() { return *submit_; }      // host -> simulator
  ShmRing& complete() { return *complete_; }  // simulator -> host
  std::uint32_t transfer_bytes() const { return submit_->slot_bytes() - kUsbSimDescBytes; }

 private:
  std::unique_ptr<ShmRing> submit_, complete_;
};

}  // namespace hilrig
