// The per-datagram pacer (TxPacer::Datagrams): how it waits (spin below kSpinNs, sleep
// for the bulk of longer waits) and the periods it achieves. Bounds are generous: a
// shared machine may preempt the spinning thread, so medians are asserted, and the
// invariants that hold whatever the load (never early, never faster than the period).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/tx_pacer.hpp"

namespace {
using hilrig::TxPacer;

TEST(TxPacer, ShortWaitsSpinLongWaitsSleepThenSpinNeverEarly) {
  EXPECT_EQ(TxPacer::wait_until(hilrig::now_ns() - 1), TxPacer::Wait::none);
  std::vector<std::uint64_t> late;
  for (int i = 0; i < 51; ++i) {
    const std::uint64_t t = hilrig::now_ns() + 5'000;
    EXPECT_NE(TxPacer::wait_until(t), TxPacer::Wait::slept);  // spun (none if preempted past t first)
    const std::uint64_t now = hilrig::now_ns();
    ASSERT_GE(now, t);
    late.push_back(now - t);
  }
  std::nth_element(late.begin(), late.begin() + 25, late.end());
  // A sleep wakes ~50 us late at best here; spinning is well below that.
  EXPECT_LT(late[25], 20'000u);
  const std::uint64_t t = hilrig::now_ns() + 20'000'000;
  EXPECT_EQ(TxPacer::wait_until(t), TxPacer::Wait::slept);
  EXPECT_GE(hilrig::now_ns(), t);
}

TEST(TxPacer, DatagramPeriodHoldsItsScheduleAndRecordsWhatItAchieved) {
  hilrig::PacingSpec spec;
  spec.period_ns = 20'000;
  TxPacer::Datagrams p(spec, 1430);
  ASSERT_TRUE(p.active());
  const int n = 500;
  const std::uint64_t first = p.before_send();
  std::uint64_t last = first;
  for (int i = 1; i < n; ++i) last = p.before_send();
  // The fixed schedule: datagram k never starts before first + k * period.
  EXPECT_GE(last - first, std::uint64_t(n - 1) * spec.period_ns);
  EXPECT_EQ(p.periods().count(), std::uint64_t(n - 1));
  const std::uint64_t p50 = p.periods().percentile(0.5);
  EXPECT_GE(p50, 19'000u);  // the histogram's buckets are ~3 % wide
  EXPECT_LE(p50, 26'000u);
  EXPECT_EQ(p.waits_slept(), 0u);  // 20 us is below kSpinNs: spun (or none when late), never slept
  EXPECT_GT(p.waits_spun(), 0u);
}

TEST(TxPacer, DatagramPeriodCatchesUpAfterAStallThenHoldsItsSchedule) {
  hilrig::PacingSpec spec;
  spec.period_ns = 20'000;
  TxPacer::Datagrams p(spec, 1430);
  const std::uint64_t first = p.before_send();
  for (int i = 1; i < 10; ++i) p.before_send();
  // A stall of 10 ms (a preemption) after datagram 9: the 500 slots it covered have passed.
  hilrig::sleep_until_ns(hilrig::now_ns() + 10'000'000);
  const std::uint64_t late_before = p.sent_late();
  std::uint64_t last = 0;
  for (int i = 10; i < 1000; ++i) last = p.before_send();
  // Every datagram whose slot the stall covered went at once (and any a preemption of
  // this test added): the stall is made up, not lost (a fresh schedule would send one).
  EXPECT_GE(p.sent_late() - late_before, 10'000'000u / spec.period_ns - 10);
  // The schedule held: datagram k never starts before its slot first + k * period.
  EXPECT_GE(last - first, 999u * spec.period_ns);
}

TEST(TxPacer, DatagramPeriodDoesNotMakeUpTimeWithNothingToSend) {
  hilrig::PacingSpec spec;
  spec.period_ns = 20'000;
  TxPacer::Datagrams p(spec, 1430);
  p.before_send();
  // The stream's rate clock held the next frames for 5 ms: they are spaced, not burst.
  hilrig::sleep_until_ns(hilrig::now_ns() + 5'000'000);
  p.ready(hilrig::now_ns());
  // The frames take a while to build after the hand-over: the schedule starts at the first
  // send, not at the hand-over (which would let the second go early).
  hilrig::sleep_until_ns(hilrig::now_ns() + 100'000);
  const std::uint64_t first = p.before_send();
  EXPECT_EQ(p.sent_late(), 0u);  // the hand-over's first is not late: nothing was waiting for it
  // Datagram k of the hand-over never starts before first + k * period (without ready(),
  // the 250 slots the wait covered would send them all at once).
  for (std::uint64_t k = 1; k < 20; ++k) EXPECT_GE(p.before_send(), first + k * spec.period_ns) << k;
}

TEST(TxPacer, DatagramPeriodFarBehindStartsAFreshSchedule) {
  hilrig::PacingSpec spec;
  spec.period_ns = 20'000;
  TxPacer::Datagrams p(spec, 1430);
  p.before_send();
  hilrig::sleep_until_ns(hilrig::now_ns() + TxPacer::Datagrams::kCatchUpNs + 5'000'000);
  const std::uint64_t restart = p.before_send();  // more than kCatchUpNs behind: a fresh schedule from here
  EXPECT_GE(p.schedule_restarts(), 1u);
  const std::uint64_t next = p.before_send();
  EXPECT_GE(next - restart, spec.period_ns);  // waits its new slot: no burst of the stall's datagrams
}

TEST(TxPacer, DatagramGapFollowsEachSendAndLongGapsSleep) {
  hilrig::PacingSpec spec;
  spec.gap_ns = 200'000;  // above kSpinNs: sleep for the bulk, spin for the rest
  TxPacer::Datagrams p(spec, 1430);
  std::uint64_t start = p.before_send();
  for (int i = 0; i < 20; ++i) {
    const std::uint64_t end = start + 30'000;  // a send that took 30 us
    hilrig::sleep_until_ns(end);
    p.after_send(end);
    const std::uint64_t next = p.before_send();
    EXPECT_GE(next, end + spec.gap_ns);  // the gap follows the end of the send
    start = next;
  }
  // How each wait went depends on how late the test's own sleep woke (spun, or none when
  // already past), so only the never-early invariant and the period it implies are asserted.
  EXPECT_LE(p.waits_slept() + p.waits_spun(), 20u);
  EXPECT_EQ(p.sent_late(), 0u);  // a gap never catches up
  EXPECT_EQ(p.schedule_restarts(), 0u);
  EXPECT_GE(p.periods().percentile(0.5), 225'000u);  // send (30 us) + gap (200 us), minus a bucket
  hilrig::PacingSpec none;
  EXPECT_FALSE(TxPacer::Datagrams(none, 1430).active());
}
}  // namespace
