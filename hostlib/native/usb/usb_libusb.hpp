// The libusb-1.0 backend of the USB engine (asynchronous API): one libusb context
// per opened device, whose events the engine's one event thread handles.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/usb/usb_engine.hpp"

struct libusb_context;
struct libusb_device_handle;

namespace hilrig {

// Which device: VID:PID and/or serial (at least one), and the interface to claim.
struct UsbDeviceMatch {
  std::uint16_t vid = 0, pid = 0;  // 0 = any
  std::string serial;              // empty = any
  int interface = 0;
  std::string text() const;        // "1d50:6108 serial X"
};
// {"vid_pid": "1d50:6108", "serial": "...", "interface": 0} (vid/pid also as numbers
// "vid"/"pid"); throws std::invalid_argument naming the key.
UsbDeviceMatch parse_usb_match(const nlohmann::json& j);

// No device matches (the case SKIPs; a device that vanishes mid-run is an error instead).
struct UsbDeviceAbsent : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class LibusbBackend final : public UsbBackend {
 public:
  // Opens the first matching device and claims the interface (detaching a kernel
  // driver if one holds it). Throws UsbDeviceAbsent or std::runtime_error.
  explicit LibusbBackend(const UsbDeviceMatch& m);
  ~LibusbBackend() override;
  // Every device libusb sees that matches: [{"vid","pid","bus","address","speed_mbps","serial"?}].
  static nlohmann::json find(const UsbDeviceMatch& m);

  std::string describe() const override { return name_; }
  std::uint32_t max_packet_bytes(std::uint8_t endpoint) const override;
  void prepare(UsbTransfer& t, Completion done, void* engine) override;
  UsbStatus submit(UsbTransfer& t) override;
  void cancel(UsbTransfer& t) override;
  void release(UsbTransfer& t) override;
  void handle_events(std::uint32_t timeout_us) override;

 private:
  struct Binding;
  libusb_context* ctx_ = nullptr;
  libusb_device_handle* handle_ = nullptr;
  int interface_ = 0;
  bool claimed_ = false;
  std::string name_;
  std::vector<std::unique_ptr<Binding>> bindings_;
};

}  // namespace hilrig
