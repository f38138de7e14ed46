// The USB bus model (docs/usb.md): its ceilings are the published bus figures, and
// what limits a stream below them (few/small transfers, a shared half-duplex bus, a
// device FIFO) shows up where it should.
#include <gtest/gtest.h>

#include "hilrig/usb/usb_bus_model.hpp"

namespace {
using namespace hilrig;

UsbDirectionSetup dir(std::uint32_t s, std::uint32_t n, double rate = 0, std::uint64_t fifo = 0) {
  UsbDirectionSetup d;
  d.enabled = true;
  d.transfer_bytes = s;
  d.transfers = n;
  d.device_rate_bytes_per_s = rate;
  d.device_fifo_bytes = fifo;
  return d;
}

double rate(std::uint64_t bytes, double s) { return double(bytes) / s; }

TEST(UsbBusModel, PublishedCeilings) {
  EXPECT_DOUBLE_EQ(UsbBusParams::usb2().capacity_bytes_per_s(), 53.248e6);  // 13 x 512 B / 125 us
  EXPECT_NEAR(UsbBusParams::usb3().capacity_bytes_per_s(), 499.7e6, 0.1e6);  // 61 x 1024 B / 125 us
  EXPECT_THROW(parse_usb_link_kind("usb4"), std::invalid_argument);
  EXPECT_EQ(parse_usb_link_kind("usb2"), UsbLinkKind::usb2);
}

TEST(UsbBusModel, Usb2OneDirectionWithDeepQueueReachesTheBus) {
  UsbBusModel m(UsbBusParams::usb2(), dir(65536, 16), {});
  m.run_for(0.2);
  const double r = rate(m.in().bytes, m.now_s());
  EXPECT_GT(r, 0.99 * 53.248e6);
  EXPECT_LE(r, 53.248e6 * 1.0001);
}

TEST(UsbBusModel, Usb2IsHalfDuplexUsb3IsNot) {
  UsbBusModel two(UsbBusParams::usb2(), dir(16384, 16), dir(16384, 16));
  two.run_for(0.2);
  const double in2 = rate(two.in().bytes, two.now_s()), out2 = rate(two.out().bytes, two.now_s());
  EXPECT_LE(in2 + out2, 53.248e6 * 1.0001);  // one bus for both
  EXPECT_GT(in2 + out2, 0.98 * 53.248e6);
  EXPECT_NEAR(in2 / out2, 1.0, 0.02);  // shared fairly
  UsbBusModel three(UsbBusParams::usb3(), dir(65536, 16), dir(65536, 16));
  three.run_for(0.05);
  EXPECT_GT(rate(three.in().bytes, three.now_s()), 0.98 * 499.7e6);  // each lane its own
  EXPECT_GT(rate(three.out().bytes, three.now_s()), 0.98 * 499.7e6);
}

TEST(UsbBusModel, FewSmallTransfersPayTheCompletionCost) {
  // One 4 KiB transfer in flight: 8 packets, then the host's completion cost before
  // it is queued again; with 16 in flight the queue hides it.
  UsbBusModel one(UsbBusParams::usb2(), dir(4096, 1), {});
  UsbBusModel many(UsbBusParams::usb2(), dir(4096, 16), {});
  one.run_for(0.2);
  many.run_for(0.2);
  const double r1 = rate(one.in().bytes, one.now_s()), r16 = rate(many.in().bytes, many.now_s());
  EXPECT_LT(r1, 0.7 * 53.248e6);
  EXPECT_GT(r16, 0.99 * 53.248e6);
  // 8 packet slots of 9.6 us + ceil(40 us / 9.6 us) = 5 slots: 8/13 of the bus.
  EXPECT_NEAR(r1 / 53.248e6, 8.0 / 13.0, 0.01);
}

TEST(UsbBusModel, DeviceFifoOverflowsOnlyAboveWhatTheBusCarries) {
  // A 16-bit I/Q device: 10.65 MS/s = 42.6 MB/s fits USB 2; 16 MS/s = 64 MB/s does not.
  UsbBusModel fits(UsbBusParams::usb2(), dir(16384, 16, 42.6e6, 32768), {});
  fits.run_for(0.2);
  EXPECT_EQ(fits.in().overflow_events, 0u);
  EXPECT_NEAR(rate(fits.in().bytes, fits.now_s()), 42.6e6, 0.01 * 42.6e6);
  UsbBusModel over(UsbBusParams::usb2(), dir(16384, 16, 64e6, 32768), {});
  over.run_for(0.2);
  EXPECT_GE(over.in().overflow_events, 1u);
  // What is lost is what the bus could not take.
  EXPECT_NEAR(rate(over.in().overflow_bytes, over.now_s()), 64e6 - 53.248e6, 0.03 * 64e6);
}

TEST(UsbBusModel, OutUnderrunsWhenTheHostCannotFeedTheDevice) {
  UsbBusModel fed(UsbBusParams::usb2(), {}, dir(16384, 16, 30e6, 65536));
  fed.run_for(0.2);
  EXPECT_EQ(fed.out().underrun_events, 0u);
  UsbBusModel starved(UsbBusParams::usb2(), {}, dir(16384, 16, 60e6, 65536));
  starved.run_for(0.2);
  EXPECT_GE(starved.out().underrun_events, 1u);
  // And with IN sharing the bus, an OUT rate that fits alone no longer does.
  UsbBusModel shared(UsbBusParams::usb2(), dir(16384, 16), dir(16384, 16, 30e6, 65536));
  shared.run_for(0.2);
  EXPECT_GE(shared.out().underrun_events, 1u);
}

}  // namespace

// The simulator's USB link feeds the IN FIFO itself (set_in_fed): the bus moves
// exactly the bytes fed, and a transfer finishes only when they cover it.
TEST(UsbBusModel, FedInMovesOnlyWhatWasFed) {
  UsbBusModel m(UsbBusParams::usb2());
  m.set_in_fed();
  m.submit(true, 16384, 7);
  m.feed_in(8192);  // one 8 KiB frame: half the transfer
  for (int i = 0; i < 13 * 8 * 4; ++i) m.step_slot();  // 4 ms: far longer than 16 packets take
  EXPECT_EQ(m.in().bytes, 8192u);
  EXPECT_TRUE(m.completions().empty());
  std::uint64_t tag = 0;
  ASSERT_TRUE(m.front(true, &tag));
  EXPECT_EQ(tag, 7u);
  m.feed_in(8192);
  for (int i = 0; i < 13 * 8; ++i) m.step_slot();
  ASSERT_EQ(m.completions().size(), 1u);
  EXPECT_EQ(m.completions()[0].bytes, 16384u);
  EXPECT_FALSE(m.front(true, &tag));
}
