// The libusb backend of the USB engine against a bulk device emulated in this
// process by umockdev (the way libusb's own tests reach usbfs without hardware):
// enumerate by VID:PID, claim, stream RX and TX frames with the pattern checked,
// and each injected error reaching its counter or the run's error. Run under
// LD_PRELOAD=libumockdev-preload.so.0 (ctest sets it). umockdev moves only a few
// thousand transfers per second, so every stream here is a few hundred transfers.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

#include "hilrig/usb/usb_engine.hpp"
#include "hilrig/usb/usb_libusb.hpp"
#include "usb_mock_device.hpp"

namespace {
using namespace hilrig;
using namespace hilrig_test;

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
