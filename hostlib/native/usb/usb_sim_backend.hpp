// The host's side of the simulator's USB link: a UsbBackend whose transfers go over
// the shared channel (hilrig/usb/usb_sim_channel.hpp) to hilrig-sim, where the bus model
// decides when each one finishes. Cancelling is the host controller's business, so it
// completes here at once (the simulator is told, to free the transfer). A simulator
// that dies ends every transfer in flight with no_device: the engine's ERROR says
// the device is gone, and nothing waits for it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/usb/usb_bus_model.hpp"
#include "hilrig/usb/usb_engine.hpp"
#include "hilrig/usb/usb_sim_channel.hpp"

namespace hilrig {

class UsbSimBackend final : public UsbBackend {
 public:
  // endpoint: the simulator's configure answer {"submit_path", "complete_path", "pid"?}.
  UsbSimBackend(UsbLinkKind link, const nlohmann::json& endpoint);
  std::string describe() const override { return name_; }
  std::uint32_t max_packet_bytes(std::uint8_t) const override { return max_packet_; }
  void prepare(UsbTransfer& t, Completion done, void* engine) override;
  UsbStatus submit(UsbTransfer& t) override;
  void cancel(UsbTransfer& t) override;
  void release(UsbTransfer&) override {}
  void handle_events(std::uint32_t timeout_us) override;

 private:
  void finish(UsbTransfer& t, UsbStatus s, std::uint32_t actual);
  bool gone(std::uint64_t now);
  UsbSimHostEnd ch_;
  std::uint32_t max_packet_;
  std::string name_;
  std::vector<UsbTransfer*> by_tag_;
  std::vector<bool> live_;             // by tag: submitted and not yet completed here
  std::vector<UsbTransfer*> cancelled_; // completed (cancelled) at the next handle_events
  Completion done_ = nullptr;
  void* engine_ = nullptr;
  std::uint64_t next_alive_check_ns_ = 0;
  bool gone_ = false;
};

}  // namespace hilrig
