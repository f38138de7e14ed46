// The libusb backend of the USB engine against a bulk device emulated in this
// process by umockdev (the way libusb's own tests reach usbfs without hardware):
// enumerate by VID:PID, claim, stream RX and TX frames with the pattern checked,
// and each injected error reaching its counter or the run's error. Run under
// LD_PRELOAD=libumockdev-preload.so.0 (ctest sets it). umockdev moves only a few
// thousand transfers per second, so every stream here is a few hundred transfers.
#include <gtest/gtest.h>

#include <linux/ioctl.h>
#include <linux/usbdevice_fs.h>
#include <umockdev.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "hilrig/clock.hpp"
#include "hilrig/framer.hpp"
#include "hilrig/rx_check.hpp"
#include "hilrig/usb_engine.hpp"
#include "hilrig/usb_libusb.hpp"

namespace {
using namespace hilrig;

constexpr std::uint16_t kVid = 0x1209, kPid = 0x4852;  // pid.codes test VID; "HR"
constexpr std::uint32_t kFrameBytes = 8192, kTransferBytes = 16384;  // 2 frames per transfer

// A hilrig board on a high-speed port: interface 0, bulk IN 0x81 and OUT 0x01, 512-byte packets.
const char* kDevice =
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

StreamConfig stream(Direction d) {
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
    EXPECT_TRUE(umockdev_testbed_attach_ioctl(testbed_, "/dev/bus/usb/001/001", handler_, &err));
    EXPECT_TRUE(umockdev_testbed_add_from_string(testbed_, kDevice, &err)) << (err ? err->message : "");
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

UsbLinkConfig link() {
  UsbLinkConfig l;
  l.transfer_bytes = kTransferBytes;
  l.transfers = 4;
  return l;
}

std::unique_ptr<UsbEngine> open_engine(Direction d) {
  UsbDeviceMatch m;
  m.vid = kVid;
  m.pid = kPid;
  return std::make_unique<UsbEngine>(std::make_unique<LibusbBackend>(m), stream(d), link());
}

// Waits until pred() holds or timeout_s passes; returns pred().
bool wait_for(const std::function<bool()>& pred, double timeout_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!pred() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return pred();
}

std::uint64_t rx(const UsbEngine& e, const char* key) { return e.stats()["rx"][key].get<std::uint64_t>(); }
std::uint64_t usb(const UsbEngine& e, const char* key) { return e.stats()["usb"][key].get<std::uint64_t>(); }

class UsbUmockdev : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(umockdev_in_mock_environment()) << "run with LD_PRELOAD=libumockdev-preload.so.0"; }
  BulkDevice dev;
};

TEST_F(UsbUmockdev, EnumeratesByVidPid) {
  UsbDeviceMatch m;
  m.vid = kVid;
  m.pid = kPid;
  auto found = LibusbBackend::find(m);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]["vid_pid"], "1209:4852");
  EXPECT_EQ(found[0]["bus"], 1);
  m.pid = 0x4853;
  EXPECT_TRUE(LibusbBackend::find(m).empty());
  EXPECT_THROW(LibusbBackend{m}, UsbDeviceAbsent);
  m.pid = kPid;
  LibusbBackend b(m);  // opens and claims interface 0
  EXPECT_EQ(b.max_packet_bytes(0x81), 512u);
  EXPECT_EQ(b.max_packet_bytes(0x01), 512u);
  EXPECT_NE(b.describe().find("1209:4852"), std::string::npos);
}

TEST_F(UsbUmockdev, GeometryIsCheckedAgainstTheEndpoint) {
  UsbDeviceMatch m;
  m.vid = kVid;
  m.pid = kPid;
  UsbLinkConfig bad = link();
  bad.transfer_bytes = 16000;  // not a multiple of 512
  try {
    UsbEngine e(std::make_unique<LibusbBackend>(m), stream(Direction::rx), bad);
    FAIL() << "accepted a transfer size that is not a multiple of the max packet size";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("use 15872 or 16384"), std::string::npos) << e.what();
  }
}

TEST_F(UsbUmockdev, StreamsRxFramesWithThePatternChecked) {
  auto e = open_engine(Direction::rx);
  e->start();
  ASSERT_TRUE(wait_for([&] { return rx(*e, "frames_received") >= 300; }, 20)) << e->stats().dump();
  e->stop();
  EXPECT_EQ(e->error(), "");
  EXPECT_EQ(rx(*e, "pattern_errors"), 0u);
  EXPECT_EQ(rx(*e, "seq_errors"), 0u);
  EXPECT_EQ(rx(*e, "missing_frames"), 0u);
  EXPECT_EQ(rx(*e, "malformed_frames"), 0u);
  EXPECT_EQ(rx(*e, "samples_received"), rx(*e, "frames_received") * ((kFrameBytes - 48) / 4));
  EXPECT_EQ(usb(*e, "usb_stalls") + usb(*e, "usb_overflows") + usb(*e, "usb_short_transfers"), 0u);
  EXPECT_GE(usb(*e, "usb_transfers_completed"), 150u);
}

TEST_F(UsbUmockdev, StreamsTxFramesThatTheDeviceChecks) {
  auto e = open_engine(Direction::tx);
  e->start();
  ASSERT_TRUE(wait_for([&] { return dev.out_counters.frames_received.load() >= 300; }, 20)) << e->stats().dump();
  e->stop();
  EXPECT_EQ(e->error(), "");
  const auto sent = e->stats()["tx"]["frames_sent"].get<std::uint64_t>();
  EXPECT_EQ(dev.out_counters.frames_received.load(), sent);  // every frame the host counted arrived
  EXPECT_TRUE(dev.out_counters.eob_received.load());         // stop ended the burst
  EXPECT_EQ(dev.out_counters.pattern_errors.load(), 0u);
  EXPECT_EQ(dev.out_counters.seq_errors.load(), 0u);
  EXPECT_EQ(dev.out_counters.malformed_frames.load(), 0u);
}

TEST_F(UsbUmockdev, StallEndsTheRunWithAnErrorNamingTheDevice) {
  dev.arm(BulkDevice::Fault::stall, 20);
  auto e = open_engine(Direction::rx);
  e->start();
  ASSERT_TRUE(wait_for([&] { return !e->running(); }, 10)) << "a stalled endpoint must end the stream";
  EXPECT_EQ(usb(*e, "usb_stalls"), 1u);
  EXPECT_NE(e->error().find("usb 1209:4852"), std::string::npos) << e->error();
  EXPECT_NE(e->error().find("0x81 IN stalled"), std::string::npos) << e->error();
  EXPECT_EQ(rx(*e, "pattern_errors"), 0u);
  e->stop();
}

TEST_F(UsbUmockdev, DeviceGoneMidRunEndsWithErrorAndNoHang) {
  dev.arm(BulkDevice::Fault::no_device, 20);
  auto e = open_engine(Direction::rx);
  e->start();
  ASSERT_TRUE(wait_for([&] { return !e->running(); }, 10)) << "an unplugged device must end the stream";
  EXPECT_GE(usb(*e, "usb_no_device"), 1u);
  EXPECT_NE(e->error().find("gone"), std::string::npos) << e->error();
  EXPECT_NE(e->error().find("1209:4852"), std::string::npos) << e->error();
  EXPECT_GE(rx(*e, "frames_received"), 2u * 18);
  const auto t0 = now_ns();
  e->stop();
  EXPECT_LT(now_ns() - t0, 1'000'000'000u);
}

TEST_F(UsbUmockdev, OverflowIsCountedAndItsFramesAreMissing) {
  dev.arm(BulkDevice::Fault::overflow, 20);
  auto e = open_engine(Direction::rx);
  e->start();
  ASSERT_TRUE(wait_for([&] { return dev.in_transfers() >= 60; }, 20));
  e->stop();
  EXPECT_EQ(e->error(), "") << "babble loses one transfer; the stream goes on";
  EXPECT_EQ(usb(*e, "usb_overflows"), 1u);
  EXPECT_EQ(rx(*e, "seq_errors"), 1u);
  EXPECT_EQ(rx(*e, "missing_frames"), kTransferBytes / kFrameBytes);
  EXPECT_EQ(rx(*e, "pattern_errors"), 0u);
}

TEST_F(UsbUmockdev, ShortTransferLosesTheFrameItCutsAndNothingElse) {
  dev.arm(BulkDevice::Fault::short_transfer, 20);
  auto e = open_engine(Direction::rx);
  e->start();
  ASSERT_TRUE(wait_for([&] { return dev.in_transfers() >= 60; }, 20));
  e->stop();
  EXPECT_EQ(e->error(), "");
  EXPECT_EQ(usb(*e, "usb_short_transfers"), 1u);
  EXPECT_EQ(rx(*e, "malformed_frames"), 1u);
  EXPECT_EQ(rx(*e, "missing_frames"), 1u);
  EXPECT_EQ(rx(*e, "pattern_errors"), 0u);
}

}  // namespace
