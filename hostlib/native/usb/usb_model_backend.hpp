// A UsbBackend whose device is simulated in-process over the USB bus model, paced in
// real time: the device fills IN transfers with pattern frames and checks OUT frames
// with the core's RxChecker, and every transfer takes the bus time the model gives it
// (USB 2 half duplex, USB 3 dual simplex; docs/usb.md). It is the USB link the
// simulator will use, here driving the host engine directly (tests, make bench).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "hilrig/core/config.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/core/rx_check.hpp"
#include "hilrig/usb/usb_bus_model.hpp"
#include "hilrig/usb/usb_engine.hpp"

namespace hilrig {

class UsbModelBackend final : public UsbBackend {
 public:
  // device: the stream the device makes (IN) and expects (OUT): the engine's config.
  // fifo_bytes > 0: the device runs at device.rate_sps through a FIFO of that size
  // (IN overflows when no transfer takes its data: frames lost, the next one flagged
  // OVERFLOW_BEFORE; OUT underruns when the host cannot keep it fed); 0: the device
  // always has data / room, the bus alone sets the pace.
  UsbModelBackend(UsbLinkKind link, const StreamConfig& device, std::uint64_t fifo_bytes = 0);
  std::string describe() const override { return name_; }
  std::uint32_t max_packet_bytes(std::uint8_t) const override { return model_.params().max_packet_bytes; }
  void prepare(UsbTransfer& t, Completion done, void* engine) override;
  UsbStatus submit(UsbTransfer& t) override;
  void cancel(UsbTransfer& t) override;
  void release(UsbTransfer&) override {}
  void handle_events(std::uint32_t timeout_us) override;
  // {"overflow_events", "overflow_frames", "underruns", "fifo_peak_bytes", "tx": RxStream keys of what
  // the device received on OUT}; read while running: the model's counts lag by one handle_events call.
  nlohmann::json device_stats() const override;

  // What the device received on OUT (read after the engine stopped, or racy but atomic).
  const RxCounters& device_rx() const { return device_rx_; }
  const UsbBusModel& model() const { return model_; }

 private:
  std::uint64_t real_slot(std::uint64_t now) const;
  UsbBusModel model_;
  StreamConfig cfg_;
  PatternFramer framer_;
  std::uint32_t frame_len_;
  RxCounters device_rx_;
  RxChecker device_check_;
  std::uint64_t device_seq_ = 0;
  std::uint64_t lost_frames_ = 0;  // IN frames lost to overflow so far (their seqs skipped)
  std::atomic<std::uint64_t> overflow_events_{0}, overflow_frames_{0}, underruns_{0}, fifo_peak_{0};
  std::vector<UsbTransfer*> by_tag_;
  Completion done_ = nullptr;
  void* engine_ = nullptr;
  std::set<std::uint64_t> cancelled_;
  std::uint64_t t0_ns_ = 0;
  double slot_ns_;
  std::string name_;
};

}  // namespace hilrig
