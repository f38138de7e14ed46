#include "hilrig/usb/usb_libusb.hpp"

#include <libusb.h>
#include <sys/time.h>

#include <cstdio>

namespace hilrig {
namespace {

std::string usb_error(int rc) { return std::string(libusb_error_name(rc)) + " (" + libusb_strerror(rc) + ")"; }

std::string vid_pid_text(std::uint16_t vid, std::uint16_t pid) {
  char b[16];
  std::snprintf(b, sizeof b, "%04x:%04x", vid, pid);
  return b;
}

std::string hex_byte(std::uint8_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%02x", v);
  return b;
}

int speed_mbps(int speed) {
  switch (speed) {
    case LIBUSB_SPEED_LOW: return 1;  // 1.5
    case LIBUSB_SPEED_FULL: return 12;
    case LIBUSB_SPEED_HIGH: return 480;
    case LIBUSB_SPEED_SUPER: return 5000;
    case LIBUSB_SPEED_SUPER_PLUS: return 10000;
    default: return 0;
  }
}

std::string read_serial(libusb_device_handle* h, std::uint8_t index) {
  if (!index) return {};
  unsigned char s[256] = {};
  int n = libusb_get_string_descriptor_ascii(h, index, s, sizeof s);
  return n > 0 ? std::string(reinterpret_cast<char*>(s), std::size_t(n)) : std::string();
}

// Calls fn(device, descriptor, handle-or-null, serial) for every device matching m.
// A serial match needs the device opened to read its string descriptor.
template <typename Fn>
void for_each_match(libusb_context* ctx, const UsbDeviceMatch& m, Fn&& fn) {
  libusb_device** list = nullptr;
  const ssize_t n = libusb_get_device_list(ctx, &list);
  if (n < 0) throw std::runtime_error("libusb: cannot list devices: " + usb_error(int(n)));
  for (ssize_t i = 0; i < n; ++i) {
    libusb_device_descriptor d{};
    if (libusb_get_device_descriptor(list[i], &d) != 0) continue;
    if ((m.vid && d.idVendor != m.vid) || (m.pid && d.idProduct != m.pid)) continue;
    std::string serial;
    if (!m.serial.empty()) {
      libusb_device_handle* h = nullptr;
      if (libusb_open(list[i], &h) != 0) continue;
      serial = read_serial(h, d.iSerialNumber);
      libusb_close(h);
      if (serial != m.serial) continue;
    }
    if (fn(list[i], d, serial)) break;
  }
  libusb_free_device_list(list, 1);
}

UsbStatus status_of(libusb_transfer_status s) {
  switch (s) {
    case LIBUSB_TRANSFER_COMPLETED: return UsbStatus::completed;
    case LIBUSB_TRANSFER_TIMED_OUT: return UsbStatus::timed_out;
    case LIBUSB_TRANSFER_STALL: return UsbStatus::stall;
    case LIBUSB_TRANSFER_NO_DEVICE: return UsbStatus::no_device;
    case LIBUSB_TRANSFER_OVERFLOW: return UsbStatus::overflow;
    case LIBUSB_TRANSFER_CANCELLED: return UsbStatus::cancelled;
    default: return UsbStatus::error;
  }
}

}  // namespace

std::string UsbDeviceMatch::text() const {
  std::string s = (vid || pid) ? vid_pid_text(vid, pid) : std::string("any VID:PID");
  if (!serial.empty()) s += " serial " + serial;
  return s;
}

UsbDeviceMatch parse_usb_match(const nlohmann::json& j) {
  UsbDeviceMatch m;
  if (!j.is_object()) throw std::invalid_argument("usb device: must be an object with vid_pid and/or serial");
  if (j.contains("vid_pid")) {
    const std::string v = j["vid_pid"].is_string() ? j["vid_pid"].get<std::string>() : std::string();
    unsigned vid = 0, pid = 0;
    char tail = 0;
    if (std::sscanf(v.c_str(), "%4x:%4x%c", &vid, &pid, &tail) != 2)
      throw std::invalid_argument("usb device.vid_pid: must be \"VVVV:PPPP\" in hex (lsusb shows it), got " +
                                  j["vid_pid"].dump());
    m.vid = std::uint16_t(vid);
    m.pid = std::uint16_t(pid);
  }
  if (j.contains("vid")) m.vid = j["vid"].get<std::uint16_t>();
  if (j.contains("pid")) m.pid = j["pid"].get<std::uint16_t>();
  if (j.contains("serial") && !j["serial"].is_null()) m.serial = j["serial"].get<std::string>();
  if (j.contains("interface")) m.interface = j["interface"].get<int>();
  if (!m.vid && !m.pid && m.serial.empty())
    throw std::invalid_argument("usb device: give vid_pid (\"VVVV:PPPP\") or serial, or both");
  return m;
}

struct LibusbBackend::Binding {
  libusb_transfer* xfer = nullptr;
  UsbTransfer* t = nullptr;
  Completion done = nullptr;
  void* engine = nullptr;
  static void LIBUSB_CALL callback(libusb_transfer* x) {
    auto* b = static_cast<Binding*>(x->user_data);
    b->t->actual = std::uint32_t(x->actual_length);
    b->t->status = status_of(x->status);
    b->done(b->engine, *b->t);
  }
};

nlohmann::json LibusbBackend::find(const UsbDeviceMatch& m) {
  libusb_context* ctx = nullptr;
  int rc = libusb_init(&ctx);
  if (rc != 0) throw std::runtime_error("libusb_init failed: " + usb_error(rc));
  nlohmann::json out = nlohmann::json::array();
  try {
    for_each_match(ctx, m, [&](libusb_device* dev, const libusb_device_descriptor& d, const std::string& serial) {
      nlohmann::json e = {{"vid", d.idVendor}, {"pid", d.idProduct}, {"vid_pid", vid_pid_text(d.idVendor, d.idProduct)},
                          {"bus", libusb_get_bus_number(dev)}, {"address", libusb_get_device_address(dev)},
                          {"speed_mbps", speed_mbps(libusb_get_device_speed(dev))}};
      if (!serial.empty()) e["serial"] = serial;
      out.push_back(e);
      return false;
    });
  } catch (...) {
    libusb_exit(ctx);
    throw;
  }
  libusb_exit(ctx);
  return out;
}

LibusbBackend::LibusbBackend(const UsbDeviceMatch& m) : interface_(m.interface) {
  int rc = libusb_init(&ctx_);
  if (rc != 0) throw std::runtime_error("libusb_init failed: " + usb_error(rc));
  int open_rc = 0;
  for_each_match(ctx_, m, [&](libusb_device* dev, const libusb_device_descriptor& d, const std::string& serial) {
    open_rc = libusb_open(dev, &handle_);
    name_ = "usb " + vid_pid_text(d.idVendor, d.idProduct) + (serial.empty() ? "" : " serial " + serial) + " (bus " +
            std::to_string(libusb_get_bus_number(dev)) + ", address " + std::to_string(libusb_get_device_address(dev)) +
            ")";
    return true;
  });
  if (!handle_) {
    libusb_exit(ctx_);
    if (open_rc != 0)
      throw std::runtime_error(name_ + ": cannot open: " + usb_error(open_rc) +
                               (open_rc == LIBUSB_ERROR_ACCESS ? "; add a udev rule giving this user the device" : ""));
    throw UsbDeviceAbsent("no USB device " + m.text() + " on this host");
  }
  libusb_set_auto_detach_kernel_driver(handle_, 1);  // not supported everywhere: best effort
  rc = libusb_claim_interface(handle_, interface_);
  if (rc != 0) {
    libusb_close(handle_);
    libusb_exit(ctx_);
    throw std::runtime_error(name_ + ": cannot claim interface " + std::to_string(interface_) + ": " + usb_error(rc) +
                             (rc == LIBUSB_ERROR_BUSY ? " (another program holds it)" : ""));
  }
  claimed_ = true;
}

LibusbBackend::~LibusbBackend() {
  // Close first: libusb_close drops transfers still in flight (ones a dead device never
  // gave back), so freeing them afterwards frees nothing libusb still holds.
  if (claimed_) libusb_release_interface(handle_, interface_);
  if (handle_) libusb_close(handle_);
  for (auto& b : bindings_)
    if (b->xfer) libusb_free_transfer(b->xfer);
  if (ctx_) libusb_exit(ctx_);
}

std::uint32_t LibusbBackend::max_packet_bytes(std::uint8_t endpoint) const {
  int n = libusb_get_max_packet_size(libusb_get_device(handle_), endpoint);
  if (n < 0)
    throw std::invalid_argument(name_ + ": endpoint " + hex_byte(endpoint) + " is not in the active configuration (" +
                                usb_error(n) + "); check endpoint_in/endpoint_out against lsusb -v");
  return std::uint32_t(n);
}

void LibusbBackend::prepare(UsbTransfer& t, Completion done, void* engine) {
  auto b = std::make_unique<Binding>();
  b->xfer = libusb_alloc_transfer(0);
  if (!b->xfer) throw std::runtime_error(name_ + ": libusb_alloc_transfer failed");
  b->t = &t;
  b->done = done;
  b->engine = engine;
  libusb_fill_bulk_transfer(b->xfer, handle_, t.endpoint, t.buffer, int(t.length), &Binding::callback, b.get(),
                            t.timeout_ms);
  t.backend_handle = b.get();
  bindings_.push_back(std::move(b));
}

UsbStatus LibusbBackend::submit(UsbTransfer& t) {
  auto* b = static_cast<Binding*>(t.backend_handle);
  b->xfer->buffer = t.buffer;
  b->xfer->length = int(t.length);
  b->xfer->timeout = t.timeout_ms;
  const int rc = libusb_submit_transfer(b->xfer);
  if (rc == 0) return UsbStatus::completed;
  if (rc == LIBUSB_ERROR_NO_DEVICE) return UsbStatus::no_device;
  if (rc == LIBUSB_ERROR_PIPE) return UsbStatus::stall;
  return UsbStatus::error;
}

void LibusbBackend::cancel(UsbTransfer& t) { libusb_cancel_transfer(static_cast<Binding*>(t.backend_handle)->xfer); }

void LibusbBackend::release(UsbTransfer& t) {
  auto* b = static_cast<Binding*>(t.backend_handle);
  if (b && b->xfer) {
    libusb_free_transfer(b->xfer);
    b->xfer = nullptr;
  }
  t.backend_handle = nullptr;
}

void LibusbBackend::handle_events(std::uint32_t timeout_us) {
  timeval tv{long(timeout_us / 1'000'000), long(timeout_us % 1'000'000)};
  libusb_handle_events_timeout_completed(ctx_, &tv, nullptr);
}

}  // namespace hilrig
