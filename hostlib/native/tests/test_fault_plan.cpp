// The fault plan: how many of each kind, where, deterministic by seed, bounded by
// the window, and the cursor that makes a fault-free frame cost one compare.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "hilrig/core/fault_plan.hpp"

namespace {
hilrig::StreamConfig cfg(unsigned channels = 2) {
  hilrig::StreamConfig c;
  c.frame_bytes = 48 + 4 * channels * 100;
  c.channels = channels;
  return c;
}
std::map<hilrig::FaultPlan::Kind, unsigned> kinds(const hilrig::FaultPlan& p) {
  std::map<hilrig::FaultPlan::Kind, unsigned> n;
  for (const auto& e : p.entries()) ++n[e.kind];
  return n;
}
}  // namespace

TEST(FaultPlan, PlacesExactlyWhatWasAskedOnSeparateFrames) {
  for (std::uint64_t seed : {1, 7, 42}) {
    hilrig::FaultSpec f;
    f.seed = seed;
    f.drop_frames = 5;
    f.duplicate_frames = 3;
    f.reorder_frames = 4;
    f.corrupt_samples = 19;  // 8 + 8 + 3 -> 3 frames
    const auto plan = hilrig::FaultPlan::make(f, cfg());
    auto n = kinds(plan);
    EXPECT_EQ(n[hilrig::FaultPlan::kDrop], 5u);
    EXPECT_EQ(n[hilrig::FaultPlan::kDuplicate], 3u);
    EXPECT_EQ(n[hilrig::FaultPlan::kSwap], 4u);
    EXPECT_EQ(n[hilrig::FaultPlan::kCorrupt], 3u);
    std::uint64_t words = 0, prev = 0;
    for (const auto& e : plan.entries()) {
      EXPECT_GE(e.seq, 16u);
      EXPECT_EQ((e.seq - 16) % 4, 0u);
      if (&e != &plan.entries().front()) {
        EXPECT_GE(e.seq, prev + 4);  // sorted, never neighbours
      }
      prev = e.seq;
      if (e.kind != hilrig::FaultPlan::kCorrupt) continue;
      words += e.words.size();
      EXPECT_NE(e.xor_mask, 0u);
      std::set<std::uint32_t> samples;
      for (auto w : e.words) {
        EXPECT_LT(w, 200u);        // inside the payload (100 samples x 2 channels)
        samples.insert(w / 2);     // one word per sample: distinct samples
      }
      EXPECT_EQ(samples.size(), e.words.size());
    }
    EXPECT_EQ(words, 19u);
    // Same seed, same plan; another seed, another placement.
    const auto again = hilrig::FaultPlan::make(f, cfg());
    ASSERT_EQ(again.entries().size(), plan.entries().size());
    for (std::size_t i = 0; i < plan.entries().size(); ++i) EXPECT_EQ(again.entries()[i].seq, plan.entries()[i].seq);
  }
  hilrig::FaultSpec a, b;
  a.drop_frames = b.drop_frames = 6;
  b.seed = 2;
  std::vector<std::uint64_t> sa, sb;
  const auto plan_a = hilrig::FaultPlan::make(a, cfg()), plan_b = hilrig::FaultPlan::make(b, cfg());
  for (const auto& e : plan_a.entries()) sa.push_back(e.seq);
  for (const auto& e : plan_b.entries()) sb.push_back(e.seq);
  EXPECT_NE(sa, sb);
}

TEST(FaultPlan, WindowBoundsPlacementAndRefusesWhatDoesNotFit) {
  EXPECT_EQ(hilrig::FaultPlan::window_slots(17), 0u);
  EXPECT_EQ(hilrig::FaultPlan::window_slots(18), 1u);  // seq 16 and its successor 17
  EXPECT_EQ(hilrig::FaultPlan::window_slots(21), 1u);
  EXPECT_EQ(hilrig::FaultPlan::window_slots(22), 2u);
  hilrig::FaultSpec f;
  f.window_frames = 100;  // slots 16, 20, ..., 96: 21
  f.reorder_frames = 21;
  const auto cap = hilrig::FaultPlan::capacity(f, cfg());
  EXPECT_EQ(cap.slots_available, 21u);
  EXPECT_TRUE(cap.fits());
  EXPECT_EQ(cap.last_seq, 97u);
  const auto plan = hilrig::FaultPlan::make(f, cfg());
  for (const auto& e : plan.entries()) EXPECT_LT(e.seq + 1, 100u);
  f.drop_frames = 1;
  EXPECT_FALSE(hilrig::FaultPlan::capacity(f, cfg()).fits());
  try {
    hilrig::FaultPlan::make(f, cfg());
    FAIL() << "22 faults in 21 slots must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("22 faulty frames"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("at most 21"), std::string::npos) << e.what();
  }
}

TEST(FaultPlan, FitRunHoldsTheCompactPlanExactly) {
  // Validation's rule (fit_run) and the plan the simulator makes agree: a run of
  // frames_needed frames holds every fault of the compact plan, one frame less does not.
  hilrig::FaultSpec f;
  f.drop_frames = 20;
  f.reorder_frames = 5;
  f.corrupt_samples = 17;  // 3 frames of up to 8 samples
  const auto fit = hilrig::FaultPlan::fit_run(f, cfg().samples_per_frame(), 1000);
  EXPECT_EQ(fit.faulted_frames, 28u);
  EXPECT_EQ(fit.frames_needed, 16u + 4u * (2u * 28u - 1u) + 2u);  // 56 slots, the last one's successor
  EXPECT_TRUE(fit.fits());
  EXPECT_EQ(fit.placeable_max, hilrig::FaultPlan::window_slots(1000) / 2);
  std::uint64_t last = 0;
  const auto plan = hilrig::FaultPlan::make(f, cfg());
  for (const auto& e : plan.entries()) last = std::max(last, e.seq + 1);
  EXPECT_LT(last, fit.frames_needed);
  EXPECT_TRUE(hilrig::FaultPlan::fit_run(f, cfg().samples_per_frame(), fit.frames_needed).fits());
  EXPECT_FALSE(hilrig::FaultPlan::fit_run(f, cfg().samples_per_frame(), fit.frames_needed - 1).fits());
  // Fewer than 32 slots in the run: nothing can be placed.
  EXPECT_EQ(hilrig::FaultPlan::fit_run(f, cfg().samples_per_frame(), 100).placeable_max, 0u);
  EXPECT_TRUE(hilrig::FaultPlan::fit_run(hilrig::FaultSpec{}, cfg().samples_per_frame(), 0).fits());
}

TEST(FaultPlan, StallIsForTheReceivingSideOnly) {
  hilrig::FaultSpec f;
  f.stall_ms = 200;
  EXPECT_THROW(hilrig::FaultPlan::make(f, cfg()), std::invalid_argument);
  auto tx = cfg();
  tx.direction = hilrig::Direction::tx;
  const auto plan = hilrig::FaultPlan::make(f, tx);
  ASSERT_EQ(plan.entries().size(), 1u);
  EXPECT_EQ(plan.entries()[0].kind, hilrig::FaultPlan::kStall);
  EXPECT_EQ(plan.stall_ns(), 200'000'000u);
}

TEST(FaultPlan, CursorFindsEachFaultOnceInSeqOrder) {
  hilrig::FaultSpec f;
  f.drop_frames = 10;
  auto plan = hilrig::FaultPlan::make(f, cfg());
  unsigned found = 0;
  for (std::uint64_t seq = 0; seq < 200; ++seq) found += plan.at(seq) != nullptr;
  EXPECT_EQ(found, 10u);
  EXPECT_EQ(plan.at(5), nullptr);  // behind the cursor
  plan.rewind();
  found = 0;
  for (std::uint64_t seq = 0; seq < 200; seq += 2) found += plan.at(seq) != nullptr;  // seq may jump
  EXPECT_EQ(found, 10u);  // faults sit on even seqs
}

TEST(FaultPlan, CorruptChangesExactlyItsWords) {
  hilrig::FaultSpec f;
  f.corrupt_samples = 8;
  for (auto fmt : {hilrig::SampleFormat::sc16, hilrig::SampleFormat::sc8}) {
    auto c = cfg(1);
    c.sample_format = fmt;
    const auto plan = hilrig::FaultPlan::make(f, c);
    ASSERT_EQ(plan.entries().size(), 1u);
    std::vector<std::uint8_t> payload(400, 0), before = payload;
    hilrig::FaultPlan::corrupt(plan.entries()[0], payload.data(), fmt);
    const unsigned wb = hilrig::bytes_per_sample(fmt);
    unsigned changed = 0;
    for (std::size_t w = 0; w < c.words_per_frame(); ++w)
      changed += std::memcmp(&payload[w * wb], &before[w * wb], wb) != 0;
    EXPECT_EQ(changed, 8u);
  }
}
