// A hilrig board emulated in-process by umockdev for the libusb backend's tests (the
// ctest usb.umockdev.* and the Python module _usb_mock that drives the usb driver end
// to end): a high-speed device 1209:4852, interface 0, bulk IN 0x81 / OUT 0x01 with
// 512-byte packets, whose usbfs ioctls are answered here the way libusb's own
// tests/umockdev.c does. IN URBs are filled with pattern frames when reaped; OUT URBs
// are checked with the core's RxChecker as they are submitted. One fault can be armed
// on the n-th IN transfer. Needs LD_PRELOAD=libumockdev-preload.so.0.
#pragma once
#include <linux/ioctl.h>
#include <linux/usbdevice_fs.h>
#include <umockdev.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/core/rx_check.hpp"

namespace hilrig_test {
using namespace hilrig;

constexpr std::uint16_t kVid = 0x1209, kPid = 0x4852;  // pid.codes test VID; "HR"
constexpr std::uint32_t kFrameBytes = 8192, kTransferBytes = 16384;  // 2 frames per transfer

// A hilrig board on a high-speed port: interface 0, bulk IN 0x81 and OUT 0x01, 512-byte packets.
inline const char* kDevice =
    "P: /devices/usb1\n"
    "N: bus/usb/001/001\n"
    "E: SUBSYSTEM=usb\n"
    "E: DRIVER=usb\n"
    "E: BUSNUM=001\n"
    "E: DEVNUM=001\n"
    "E: DEVNAME=/dev/bus/usb/001/001\n"
    "E: DEVTYPE=usb_device\n"
    "A: bConfigurationValue=1\\n\n"
    "A: busnum=1\\n\n"
    "A: devnum=1\\n\n"
    "A: speed=480\\n\n"
    "H: descriptors="
    "120100020000004009125248000100000001"    // device: bcdUSB 2.00, 1209:4852, one configuration
    "0902200001010080320904000002ff000000"    // configuration (32 bytes), interface 0: 2 endpoints
    "07058102000200"                          // endpoint 0x81 bulk IN, 512
    "07050102000200\n";                       // endpoint 0x01 bulk OUT, 512

inline StreamConfig stream(Direction d) {
  StreamConfig c;
  c.direction = d;
  c.rate_sps = 10e6;
  c.frame_bytes = kFrameBytes;
  return c;
}

// The emulated device. IN transfers are filled with consecutive pattern frames when
// libusb reaps them; OUT transfers are checked with the core's RxChecker as they are
// submitted. One fault can be armed on the n-th IN transfer.
class BulkDevice {
 public:
  enum class Fault { none, stall, no_device, overflow, short_transfer };

  BulkDevice() : framer_(stream(Direction::rx)), checker_(out_counters) {
    testbed_ = umockdev_testbed_new();
    handler_ = umockdev_ioctl_base_new();
    g_signal_connect(handler_, "handle-ioctl", G_CALLBACK(&BulkDevice::on_ioctl), this);
    GError* err = nullptr;
    if (!umockdev_testbed_attach_ioctl(testbed_, "/dev/bus/usb/001/001", handler_, &err) ||
        !umockdev_testbed_add_from_string(testbed_, kDevice, &err))
      throw std::runtime_error(std::string("umockdev: cannot add the device: ") + (err ? err->message : "?"));
  }
  ~BulkDevice() {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& u : pending_) g_object_unref(u.data);
    for (auto* d : discarded_) g_object_unref(d);
    g_clear_object(&handler_);
    g_clear_object(&testbed_);
  }
  void arm(Fault f, unsigned at_in_transfer) {
    std::lock_guard<std::mutex> g(mu_);
    fault_ = f;
    fault_at_ = at_in_transfer;
  }
  unsigned in_transfers() {
    std::lock_guard<std::mutex> g(mu_);
    return in_count_;
  }
  RxCounters out_counters;  // what the device received on OUT

 private:
  struct Urb {
    UMockdevIoctlData* data;
  };
  static gboolean on_ioctl(UMockdevIoctlBase*, UMockdevIoctlClient* client, BulkDevice* self) {
    return self->handle(client);
  }

  gboolean handle(UMockdevIoctlClient* client) {
    std::lock_guard<std::mutex> g(mu_);
    const unsigned long request = umockdev_ioctl_client_get_request(client);
    UMockdevIoctlData* arg = umockdev_ioctl_client_get_arg(client);
    switch (request) {
      case USBDEVFS_GET_CAPABILITIES: {
        UMockdevIoctlData* d = umockdev_ioctl_data_resolve(arg, 0, sizeof(guint32), nullptr);
        *reinterpret_cast<guint32*>(d->data) = USBDEVFS_CAP_BULK_CONTINUATION | USBDEVFS_CAP_NO_PACKET_SIZE_LIM |
                                               USBDEVFS_CAP_REAP_AFTER_DISCONNECT;
        g_object_unref(d);
        umockdev_ioctl_client_complete(client, 0, 0);
        return TRUE;
      }
      case USBDEVFS_CLAIMINTERFACE:
      case USBDEVFS_RELEASEINTERFACE:
      case USBDEVFS_CLEAR_HALT:
      case USBDEVFS_RESET:
        umockdev_ioctl_client_complete(client, gone_ ? -1 : 0, gone_ ? ENODEV : 0);
        return TRUE;
      case USBDEVFS_GETDRIVER:
      case USBDEVFS_IOCTL:
        umockdev_ioctl_client_complete(client, -1, ENODATA);  // no kernel driver bound
        return TRUE;
      case USBDEVFS_SUBMITURB: {
        if (gone_) {
          umockdev_ioctl_client_complete(client, -1, ENODEV);
          return TRUE;
        }
        UMockdevIoctlData* data = umockdev_ioctl_data_resolve(arg, 0, sizeof(usbdevfs_urb), nullptr);
        auto* urb = reinterpret_cast<usbdevfs_urb*>(data->data);
        UMockdevIoctlData* buf =
            umockdev_ioctl_data_resolve(data, offsetof(usbdevfs_urb, buffer), std::size_t(urb->buffer_length), nullptr);
        if (!(urb->endpoint & 0x80)) {
          // OUT: the device takes the frames now, checked like any received frame.
          FrameHeader h;
          const std::uint64_t now = now_ns();
          for (int off = 0; off + int(kFrameHeaderBytes) <= urb->buffer_length;) {
            std::uint32_t payload;
            std::memcpy(&payload, buf->data + off + 8, 4);
            const int len = int(kFrameHeaderBytes + payload);
            if (len > urb->buffer_length - off) {
              checker_.on_malformed();
              break;
            }
            if (!checker_.on_frame(buf->data + off, std::size_t(len), now, &h)) break;
            off += len;
          }
          checker_.on_batch_done(now);
        }
        g_object_unref(buf);
        pending_.push_back({data});
        umockdev_ioctl_client_complete(client, 0, 0);
        return TRUE;
      }
      case USBDEVFS_DISCARDURB: {
        const auto addr = reinterpret_cast<gulong>(*reinterpret_cast<void**>(arg->data));
        for (auto it = pending_.begin(); it != pending_.end(); ++it)
          if (it->data->client_addr == addr) {
            discarded_.push_back(it->data);
            pending_.erase(it);
            umockdev_ioctl_client_complete(client, 0, 0);
            return TRUE;
          }
        umockdev_ioctl_client_complete(client, -1, EINVAL);
        return TRUE;
      }
      case USBDEVFS_REAPURB:
      case USBDEVFS_REAPURBNDELAY: {
        UMockdevIoctlData* data = nullptr;
        int status = 0;
        if (!discarded_.empty()) {
          data = discarded_.front();
          discarded_.pop_front();
          status = -ENOENT;
          reinterpret_cast<usbdevfs_urb*>(data->data)->actual_length = 0;
        } else if (!pending_.empty()) {
          data = pending_.front().data;
          pending_.pop_front();
          status = complete_urb(reinterpret_cast<usbdevfs_urb*>(data->data));
        } else {
          umockdev_ioctl_client_complete(client, -1, EAGAIN);
          return TRUE;
        }
        reinterpret_cast<usbdevfs_urb*>(data->data)->status = status;
        UMockdevIoctlData* ptr = umockdev_ioctl_data_resolve(arg, 0, sizeof(gpointer), nullptr);
        umockdev_ioctl_data_set_ptr(ptr, 0, data);
        g_object_unref(ptr);
        g_object_unref(data);
        umockdev_ioctl_client_complete(client, 0, 0);
        return TRUE;
      }
      default:
        return FALSE;
    }
  }

  // Fills (IN) or acknowledges (OUT) one URB; returns its status (0 or -errno).
  int complete_urb(usbdevfs_urb* urb) {
    if (gone_) {
      urb->actual_length = 0;
      return -ENODEV;
    }
    if (!(urb->endpoint & 0x80)) {
      urb->actual_length = urb->buffer_length;
      return 0;
    }
    const unsigned n = ++in_count_;
    const Fault f = n == fault_at_ ? fault_ : Fault::none;
    const int frames = urb->buffer_length / int(kFrameBytes);
    auto* out = static_cast<std::uint8_t*>(urb->buffer);
    urb->actual_length = 0;
    switch (f) {
      case Fault::stall:
        return -EPIPE;
      case Fault::no_device:
        gone_ = true;
        return -ENODEV;
      case Fault::overflow:
        seq_ += std::uint64_t(frames);  // the device sent them; the host lost them all
        return -EOVERFLOW;
      case Fault::short_transfer:
        // One whole frame, then the first 100 bytes of the next: the transfer ends there.
        framer_.build(seq_++, 0, out);
        finish_frame(out, false, now_ns());
        framer_.build(seq_++, 0, out + kFrameBytes);
        urb->actual_length = int(kFrameBytes) + 100;
        return 0;
      default:
        break;
    }
    const std::uint64_t ts = now_ns();
    for (int i = 0; i < frames; ++i) {
      framer_.build(seq_++, 0, out + std::size_t(i) * kFrameBytes);
      finish_frame(out + std::size_t(i) * kFrameBytes, false, ts);
    }
    urb->actual_length = frames * int(kFrameBytes);
    return 0;
  }

  UMockdevTestbed* testbed_ = nullptr;
  UMockdevIoctlBase* handler_ = nullptr;
  std::mutex mu_;
  std::deque<Urb> pending_;
  std::deque<UMockdevIoctlData*> discarded_;
  PatternFramer framer_;
  RxChecker checker_;
  std::uint64_t seq_ = 0;
  unsigned in_count_ = 0, fault_at_ = 0;
  Fault fault_ = Fault::none;
  bool gone_ = false;
};

}  // namespace hilrig_test
