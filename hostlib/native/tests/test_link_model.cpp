// The link model in virtual time: configured vs delivered for delay, jitter, rate and
// the drop-tail queue, loss (Bernoulli and Gilbert-Elliott), reorder and duplicate;
// exact where the model or the seed fixes a count, else within the binomial 99 % interval.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "hilrig/link/link_model.hpp"

namespace {
using hilrig::LinkModel;
using hilrig::LinkSpec;
using hilrig::counter_get;

struct Out {
  std::uint64_t t_ns, in_ns, order;
};

// Takes every packet out at exactly its due time.
std::vector<Out> drain(LinkModel& m, std::uint64_t until = LinkModel::kNever) {
  std::vector<Out> out;
  LinkModel::Packet p;
  for (std::uint64_t t = m.next_due(); t != LinkModel::kNever && t <= until; t = m.next_due())
    while (m.pop_due(t, p)) out.push_back({t, p.in_ns, p.order});
  return out;
}

// Half-width of the binomial 99 % interval (normal approximation, z = 2.576), plus one.
double binomial99(double n, double p) { return 2.576 * std::sqrt(n * p * (1 - p)) + 1; }
}  // namespace

TEST(LinkModel, DelayIsExactForEveryPacket) {
  LinkSpec s;
  s.delay_ns = 125'000'000;
  LinkModel m(s);
  for (std::uint64_t i = 0; i < 10000; ++i) ASSERT_EQ(m.offer(i * 10'000, 1458), 1u);
  const auto out = drain(m);
  ASSERT_EQ(out.size(), 10000u);
  for (const auto& o : out) ASSERT_EQ(o.t_ns - o.in_ns, s.delay_ns);
  EXPECT_EQ(m.stats().delay_ns.max(), s.delay_ns);
  EXPECT_EQ(counter_get(m.stats().packets_out), 10000u);
  EXPECT_EQ(m.stats().late_ns.max(), 0u);
}

TEST(LinkModel, RateIsTheConfiguredOneAndTheQueueDropsTheRest) {
  LinkSpec s;
  s.rate_bps = 500e6;
  s.queue_bytes = 16 * 1024 * 1024;
  LinkModel m(s);
  // Offered at twice the rate for 2 s of virtual time: 1458-byte packets every 11.664 us.
  const std::uint32_t size = 1458;
  const double gap_ns = size * 8e9 / (2 * s.rate_bps);
  std::uint64_t offered = 0;
  std::vector<Out> out;
  for (std::uint64_t i = 0;; ++i) {
    const auto t = std::uint64_t(double(i) * gap_ns);
    if (t > 2'000'000'000ull) break;
    auto due = drain(m, t);
    out.insert(out.end(), due.begin(), due.end());
    m.offer(t, size);
    ++offered;
  }
  auto rest = drain(m);
  out.insert(out.end(), rest.begin(), rest.end());
  const auto& st = m.stats();
  // Delivered rate over the busy period: within 1 % (exact but for the last packet's rounding).
  const double span_s = double(out.back().t_ns - out.front().t_ns) / 1e9;
  const double delivered_bps = double(out.size() - 1) * size * 8 / span_s;
  EXPECT_NEAR(delivered_bps / s.rate_bps, 1.0, 0.01) << delivered_bps;
  EXPECT_GT(counter_get(st.dropped_queue), 0u);
  EXPECT_LE(counter_get(st.queue_bytes_max), s.queue_bytes);
  EXPECT_EQ(counter_get(st.packets_in), offered);
  EXPECT_EQ(offered, out.size() + counter_get(st.dropped_queue));
  // The queue holds 16 MiB at 500 Mbit/s: the queueing delay tops out at 16 MiB / rate.
  const double queue_s = double(s.queue_bytes) * 8 / s.rate_bps;
  EXPECT_NEAR(double(st.delay_ns.max()) / 1e9, queue_s, 0.001 * queue_s + 1e-4);
}

TEST(LinkModel, BelowTheRateNothingIsDroppedOrQueued) {
  LinkSpec s;
  s.rate_bps = 1e9;
  s.queue_bytes = 64 * 1024;
  LinkModel m(s);
  const std::uint32_t size = 1458;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    drain(m, i * 20'000);
    ASSERT_EQ(m.offer(i * 20'000, size), 1u);   // 583 Mbit/s offered
  }
  drain(m);
  EXPECT_EQ(counter_get(m.stats().dropped_queue), 0u);
  // Each packet is only serialised: 1458 bytes at 1 Gbit/s.
  EXPECT_EQ(m.stats().delay_ns.max(), 11664u);
}

TEST(LinkModel, DropTailKeepsExactlyWhatTheQueueHolds) {
  LinkSpec s;
  s.rate_bps = 100e6;
  s.queue_bytes = 10 * 1000;
  LinkModel m(s);
  unsigned kept = 0;
  for (int i = 0; i < 100; ++i) kept += m.offer(0, 1000);   // a burst at one instant
  EXPECT_EQ(kept, 10u);
  EXPECT_EQ(counter_get(m.stats().dropped_queue), 90u);
  EXPECT_EQ(counter_get(m.stats().dropped_queue_bytes), 90'000u);
  EXPECT_EQ(m.queued_bytes(0), 10'000u);
  EXPECT_EQ(m.queued_bytes(400'000), 5'000u);   // 5000 bytes left after 400 us at 100 Mbit/s
}

TEST(LinkModel, JitterStaysInItsBandAndNeverReorders) {
  LinkSpec s;
  s.delay_ns = 10'000'000;
  s.jitter_ns = 1'000'000;
  s.seed = 3;
  LinkModel sparse(s), dense(s);
  for (std::uint64_t i = 0; i < 20000; ++i) {
    sparse.offer(i * 3'000'000, 100);   // far apart: the jitter is never clamped by the order
    dense.offer(i * 10'000, 100);       // 10 us apart, jitter 1 ms: order keeps them in line
  }
  double sum = 0;
  for (const auto& o : drain(sparse)) {
    const auto d = o.t_ns - o.in_ns;
    ASSERT_GE(d, 9'000'000u);
    ASSERT_LE(d, 11'000'000u);
    sum += double(d);
  }
  EXPECT_NEAR(sum / 20000, 10e6, 0.02e6);   // the mean is the delay (sd of the mean ~4 us)
  std::uint64_t prev = 0;
  for (const auto& o : drain(dense)) {
    ASSERT_GE(o.order, prev);
    prev = o.order;
  }
}

TEST(LinkModel, BernoulliLossWithinTheBinomialIntervalAndFixedBySeed) {
  const double n = 1e6;
  auto lost = [&](std::uint64_t seed) {
    LinkSpec s;
    s.loss = 0.01;
    s.seed = seed;
    LinkModel m(s);
    for (std::uint64_t i = 0; i < std::uint64_t(n); ++i) m.offer(i * 1000, 1458);
    EXPECT_EQ(counter_get(m.stats().dropped_loss) + m.in_flight(), std::uint64_t(n));
    return counter_get(m.stats().dropped_loss);
  };
  const auto a = lost(1), b = lost(1), c = lost(2);
  EXPECT_EQ(a, b);   // the seed fixes the count
  EXPECT_NE(a, c);
  for (auto k : {a, c}) EXPECT_NEAR(double(k), n * 0.01, binomial99(n, 0.01));
}

TEST(LinkModel, GilbertElliottBurstsHaveTheirStationaryRateAndMeanLength) {
  LinkSpec s;
  s.burst_p = 0.01;
  s.burst_r = 0.25;
  s.seed = 11;
  LinkModel m(s);
  const std::uint64_t n = 2'000'000;
  std::uint64_t bursts = 0, lost = 0;
  bool prev_lost = false;
  for (std::uint64_t i = 0; i < n; ++i) {
    const bool gone = m.offer(i, 100) == 0;
    lost += gone;
    bursts += gone && !prev_lost;
    prev_lost = gone;
    drain(m, i);
  }
  EXPECT_EQ(lost, counter_get(m.stats().dropped_loss));
  const double pi_bad = s.burst_p / (s.burst_p + s.burst_r);   // 0.0385
  EXPECT_NEAR(double(lost) / double(n), pi_bad, 0.05 * pi_bad);
  // Loss 1 in the bad state: a burst is a stay in it, geometric with mean 1/r.
  EXPECT_NEAR(double(lost) / double(bursts), 1 / s.burst_r, 0.15);
}

TEST(LinkModel, ReorderedPacketsLeaveAheadOfTheirPredecessors) {
  LinkSpec s;
  s.delay_ns = 10'000'000;
  s.reorder = 0.1;
  s.seed = 5;
  LinkModel m(s);
  const std::uint64_t n = 20000;
  for (std::uint64_t i = 0; i < n; ++i) m.offer(i * 1'000'000, 100);   // 1 ms apart, 10 in flight
  const auto out = drain(m);
  ASSERT_EQ(out.size(), n);
  // A packet is reordered when it leaves before one that arrived earlier: some packet
  // after it in the output has a smaller arrival order.
  std::uint64_t overtaking = 0, lowest_after = ~std::uint64_t(0);
  for (auto it = out.rbegin(); it != out.rend(); ++it) {
    overtaking += lowest_after < it->order;
    lowest_after = std::min(lowest_after, it->order);
  }
  const auto reordered = counter_get(m.stats().reordered);
  EXPECT_EQ(overtaking, reordered);
  EXPECT_NEAR(double(reordered), 0.1 * n, binomial99(double(n), 0.1));
  // The others kept the delay exactly.
  std::uint64_t delayed = 0;
  for (const auto& o : out) delayed += (o.t_ns - o.in_ns) == s.delay_ns;
  EXPECT_EQ(delayed + reordered, n);
}

TEST(LinkModel, DuplicatesAreCountedAndDelivered) {
  LinkSpec s;
  s.duplicate = 0.05;
  s.delay_ns = 1000;
  s.seed = 9;
  LinkModel m(s);
  const std::uint64_t n = 100000;
  for (std::uint64_t i = 0; i < n; ++i) m.offer(i * 100, 100);
  const auto out = drain(m);
  const auto dup = counter_get(m.stats().duplicated);
  EXPECT_EQ(out.size(), n + dup);
  EXPECT_NEAR(double(dup), 0.05 * n, binomial99(double(n), 0.05));
}

TEST(LinkModel, EveryPacketIsAccountedFor) {
  LinkSpec s;
  s.rate_bps = 10e6;
  s.queue_bytes = 20000;
  s.delay_ns = 5'000'000;
  s.jitter_ns = 100'000;
  s.loss = 0.02;
  s.burst_p = 0.001;
  s.burst_r = 0.3;
  s.reorder = 0.05;
  s.duplicate = 0.03;
  s.seed = 77;
  LinkModel m(s);
  for (std::uint64_t i = 0; i < 50000; ++i) {
    drain(m, i * 500'000);
    m.offer(i * 500'000, 1000);   // 16 Mbit/s offered into 10
  }
  drain(m);
  const auto& st = m.stats();
  EXPECT_EQ(counter_get(st.packets_in) + counter_get(st.duplicated),
            counter_get(st.packets_out) + counter_get(st.dropped_queue) + counter_get(st.dropped_loss));
  EXPECT_GT(counter_get(st.dropped_queue), 0u);
  EXPECT_GT(counter_get(st.reordered), 0u);
}

TEST(LinkModel, SpecJsonRoundTripsAndRefusesWhatItDoesNotKnow) {
  LinkSpec s;
  s.rate_bps = 1e9;
  s.delay_ns = 250'000;
  s.loss = 1e-4;
  s.seed = 42;
  const auto j = hilrig::to_json(s);
  const LinkSpec back = hilrig::link_spec_from_json(j);
  EXPECT_EQ(hilrig::to_json(back), j);
  EXPECT_THROW(hilrig::link_spec_from_json({{"rate", 1}}), std::invalid_argument);
  EXPECT_THROW(hilrig::link_spec_from_json({{"loss", 1.5}}), std::invalid_argument);
  EXPECT_THROW(hilrig::link_spec_from_json({{"reorder", 0.1}}), std::invalid_argument);   // no delay
  EXPECT_THROW(hilrig::link_spec_from_json({{"burst_p", 0.1}, {"burst_r", 0}}), std::invalid_argument);
  try {
    hilrig::link_spec_from_json({{"delay_ns", -1}}, "configure.up");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("configure.up.delay_ns"), std::string::npos);
  }
}
