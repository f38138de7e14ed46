// The USB engine over the bus model's in-process device (usb_model_backend.hpp): every
// frame arrives checked, and the bus is never faster than the model's ceiling.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "hilrig/core/clock.hpp"
#include "hilrig/usb/usb_model_backend.hpp"

namespace {
using namespace hilrig;

StreamConfig stream(Direction d) {
  StreamConfig c;
  c.direction = d;
  c.frame_bytes = 8192;
  return c;
}

UsbLinkConfig link(std::uint32_t s, std::uint32_t n) {
  UsbLinkConfig l;
  l.transfer_bytes = s;
  l.transfers = n;
  return l;
}

struct Run {
  nlohmann::json stats;
  double seconds;
  RxCounters const* device_rx;
};

TEST(UsbModelBackend, Usb3RxEveryFrameCheckedNeverAboveTheLane) {
  auto be = std::make_unique<UsbModelBackend>(UsbLinkKind::usb3, stream(Direction::rx));
  UsbEngine e(std::move(be), stream(Direction::rx), link(65536, 16));
  const auto t0 = now_ns();
  e.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  e.stop();
  const double s = double(now_ns() - t0) * 1e-9;
  const auto st = e.stats();
  EXPECT_EQ(st["error"], "");
  const auto rx = st["rx"];
  EXPECT_GT(rx["frames_received"].get<std::uint64_t>(), 1000u);
  EXPECT_EQ(rx["pattern_errors"], 0);
  EXPECT_EQ(rx["missing_frames"], 0);
  EXPECT_EQ(rx["malformed_frames"], 0);
  EXPECT_LE(double(st["usb"]["usb_bytes_transferred"].get<std::uint64_t>()) / s, 499.7e6 * 1.02);
}

TEST(UsbModelBackend, Usb2LoopbackSharesTheBusAndTheDeviceChecksOut) {
  auto be = std::make_unique<UsbModelBackend>(UsbLinkKind::usb2, stream(Direction::loopback));
  const UsbModelBackend& dev = *be;
  UsbEngine e(std::move(be), stream(Direction::loopback), link(16384, 8));
  const auto t0 = now_ns();
  e.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  e.stop();
  const double s = double(now_ns() - t0) * 1e-9;
  const auto st = e.stats();
  EXPECT_EQ(st["error"], "");
  const auto in = st["rx"]["payload_bytes_received"].get<std::uint64_t>();
  const auto out = st["tx"]["payload_bytes_sent"].get<std::uint64_t>();
  EXPECT_GT(in, 0u);
  EXPECT_GT(out, 0u);
  EXPECT_LE(double(in + out) / s, 53.248e6 * 1.02);  // one half-duplex bus for both
  EXPECT_EQ(st["rx"]["pattern_errors"], 0);
  EXPECT_EQ(st["rx"]["missing_frames"], 0);
  // The device got every OUT frame the host counted, in order, ending with EOB.
  EXPECT_EQ(dev.device_rx().frames_received.load(), st["tx"]["frames_sent"].get<std::uint64_t>());
  EXPECT_EQ(dev.device_rx().pattern_errors.load(), 0u);
  EXPECT_EQ(dev.device_rx().seq_errors.load(), 0u);
  EXPECT_TRUE(dev.device_rx().eob_received.load());
}

}  // namespace

namespace {

// A 16-bit I/Q device at master clock 64 MHz: decimation 16 = 4 MS/s = 16 MB/s fits USB 2;
// decimation 4 = 16 MS/s = 64 MB/s does not, and its FIFO overflows.
nlohmann::json paced_rx(double rate_sps, std::uint64_t fifo_bytes) {
  StreamConfig c = stream(Direction::rx);
  c.rate_sps = rate_sps;
  UsbEngine e(std::make_unique<UsbModelBackend>(UsbLinkKind::usb2, c, fifo_bytes), c, link(16384, 16));
  e.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  e.stop();
  return e.stats();
}

TEST(UsbModelBackend, PacedDeviceThatFitsTheBusNeverOverflows) {
  const auto st = paced_rx(4e6, 65536);
  EXPECT_EQ(st["error"], "");
  EXPECT_GT(st["rx"]["frames_received"].get<std::uint64_t>(), 100u);
  EXPECT_EQ(st["device_stats"]["overflow_events"], 0);
  EXPECT_EQ(st["rx"]["missing_frames"], 0);
  EXPECT_EQ(st["rx"]["overruns"], 0);
  EXPECT_EQ(st["rx"]["pattern_errors"], 0);
}

TEST(UsbModelBackend, PacedDeviceAboveTheBusOverflowsAndEveryLostFrameIsCounted) {
  const auto st = paced_rx(16e6, 65536);
  EXPECT_EQ(st["error"], "");
  EXPECT_GE(st["device_stats"]["overflow_events"].get<std::uint64_t>(), 1u);
  const auto lost = st["device_stats"]["overflow_frames"].get<std::uint64_t>();
  EXPECT_GE(lost, 1u);
  EXPECT_EQ(st["rx"]["missing_frames"].get<std::uint64_t>(), lost);  // exactly what the device dropped
  EXPECT_GE(st["rx"]["overruns"].get<std::uint64_t>(), 1u);           // flagged OVERFLOW_BEFORE
  EXPECT_EQ(st["rx"]["pattern_errors"], 0);
}

}  // namespace
