// The simulated device's TX sample clock: what it played is never more than the rate
// allows, however far ahead the host sent; it underruns when the host falls behind.
#include <gtest/gtest.h>

#include "hilrig/sim/playout_clock.hpp"

namespace {
constexpr double kRateSps = 1e6;  // one sample a microsecond
constexpr std::uint64_t kUs = 1000;
}  // namespace

TEST(PlayoutClock, AHostsLeadIsPlayedAtTheRate) {
  hilrig::PlayoutClock clock(kRateSps);
  // the host sends 10 000 samples at once (its lead), the clock starts at t = 0
  clock.on_frame(0, 10'000, false);
  EXPECT_FALSE(clock.advance(1000 * kUs));
  EXPECT_EQ(clock.played().samples, 1000u);
  EXPECT_EQ(clock.played().at_ns, 1000 * kUs);
  EXPECT_FALSE(clock.advance(4000 * kUs));
  EXPECT_EQ(clock.played().samples, 4000u);
}

TEST(PlayoutClock, UnderrunsWhenTheClockPassesWhatArrived) {
  hilrig::PlayoutClock clock(kRateSps);
  clock.on_frame(0, 1000, false);
  EXPECT_FALSE(clock.advance(999 * kUs));
  EXPECT_TRUE(clock.advance(1001 * kUs));  // starved mid-burst: one underrun
  EXPECT_EQ(clock.played().samples, 1000u);
  EXPECT_FALSE(clock.advance(5000 * kUs));  // idle until the next frame, not another underrun
  EXPECT_EQ(clock.played().samples, 1000u);
  clock.on_frame(5000 * kUs, 1000, false);  // a new run starts at its first frame
  EXPECT_FALSE(clock.advance(5500 * kUs));
  EXPECT_EQ(clock.played().samples, 1500u);
}

TEST(PlayoutClock, AnEndOfBurstIsNoUnderrun) {
  hilrig::PlayoutClock clock(kRateSps);
  clock.on_frame(0, 1000, true);
  EXPECT_FALSE(clock.advance(2000 * kUs));
  EXPECT_EQ(clock.played().samples, 1000u);
}

TEST(PlayoutClock, NothingIsPlayedBeforeTheFirstFrame) {
  hilrig::PlayoutClock clock(kRateSps);
  EXPECT_EQ(clock.played().at_ns, 0u);
  EXPECT_FALSE(clock.advance(100 * kUs));
  EXPECT_EQ(clock.played().samples, 0u);
  EXPECT_EQ(clock.played().at_ns, 100 * kUs);
}
