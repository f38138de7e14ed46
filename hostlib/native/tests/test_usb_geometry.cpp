// USB transfer geometry rules and the usbfs limit (usb_engine.hpp), with their fixes.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "hilrig/usb/usb_engine.hpp"

namespace {
using namespace hilrig;

bool has(const std::vector<std::string>& v, const std::string& text) {
  for (auto& s : v)
    if (s.find(text) != std::string::npos) return true;
  return false;
}

TEST(UsbGeometry, GoodGeometryHasNoProblems) {
  UsbLinkConfig l;  // 16 x 16 KiB, packed
  EXPECT_TRUE(usb_geometry_problems(l, 8192, 512, 1, 16u << 20).empty());
  l.framing = UsbFraming::short_packet;
  EXPECT_TRUE(usb_geometry_problems(l, 8176, 512, 2, 16u << 20).empty());  // UHD's B2xx default frame
}

TEST(UsbGeometry, EachRuleSaysTheFix) {
  UsbLinkConfig l;
  l.transfer_bytes = 10000;
  auto p = usb_geometry_problems(l, 5000, 512, 1, 16u << 20);
  EXPECT_TRUE(has(p, "not a multiple of the endpoint's max packet size 512")) << p[0];
  EXPECT_TRUE(has(p, "use 9728 or 10240"));
  l.transfer_bytes = 16384;
  p = usb_geometry_problems(l, 5000, 512, 1, 16u << 20);
  EXPECT_TRUE(has(p, "a frame would straddle two transfers"));
  EXPECT_TRUE(has(p, "use frame_bytes 4096"));
  l.framing = UsbFraming::short_packet;
  p = usb_geometry_problems(l, 8192, 512, 1, 16u << 20);
  EXPECT_TRUE(has(p, "is a multiple of the max packet size 512"));
  EXPECT_TRUE(has(p, "use 8176 or 8208"));
  l.framing = UsbFraming::packed;
  l.transfer_bytes = 1u << 20;
  l.transfers = 16;
  p = usb_geometry_problems(l, 8192, 512, 2, 16u << 20);  // 32 MiB in flight
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(has(p, "exceed the kernel's usbfs limit of 16777216 bytes"));
  EXPECT_TRUE(has(p, "use transfers <= 8"));
  EXPECT_TRUE(has(p, "echo 32 > /sys/module/usbcore/parameters/usbfs_memory_mb"));
}

TEST(UsbGeometry, UsbfsLimitIsReadWhereItExists) {
  EXPECT_EQ(usbfs_memory_limit_bytes("/nonexistent/usbfs_memory_mb"), 16ull << 20);
  const std::string path = ::testing::TempDir() + "usbfs_memory_mb";
  std::ofstream(path) << "64\n";
  EXPECT_EQ(usbfs_memory_limit_bytes(path.c_str()), 64ull << 20);
  std::ofstream(path) << "0\n";
  EXPECT_EQ(usbfs_memory_limit_bytes(path.c_str()), ~std::uint64_t(0));  // no limit
  std::remove(path.c_str());
}

TEST(UsbGeometry, LinkConfigParsesAndNamesBadKeys) {
  auto l = parse_usb_link({{"kind", "usb"}, {"transfer_bytes", 32768}, {"transfers", 8}, {"framing", "short_packet"}});
  EXPECT_EQ(l.transfer_bytes, 32768u);
  EXPECT_EQ(l.transfers, 8u);
  EXPECT_EQ(l.framing, UsbFraming::short_packet);
  try {
    parse_usb_link({{"transfers", 0}});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("usb transport.transfers"), std::string::npos);
  }
  EXPECT_THROW(parse_usb_link({{"framing", "zlp"}}), std::invalid_argument);
}

}  // namespace

// The engine's link config and the stream config's usb transport default to the one table.
TEST(UsbDefaults, EngineAndStreamConfigTakeTheCoresTable) {
  const hilrig::UsbLinkConfig parsed = hilrig::parse_usb_link({{"kind", "usb"}});
  EXPECT_EQ(parsed.transfer_bytes, hilrig::defaults::kUsbTransferBytes);
  EXPECT_EQ(parsed.transfers, hilrig::defaults::kUsbTransfers);
  const hilrig::TransportSpec t;
  EXPECT_EQ(t.link, hilrig::defaults::kUsbLink);
  EXPECT_EQ(t.transfer_bytes, hilrig::defaults::kUsbTransferBytes);
  EXPECT_EQ(t.transfers, hilrig::defaults::kUsbTransfers);
}
