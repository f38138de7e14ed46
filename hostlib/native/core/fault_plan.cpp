#include "hilrig/core/fault_plan.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

namespace hilrig {

FaultPlan::Capacity FaultPlan::capacity(const FaultSpec& f, const StreamConfig& cfg) {
  return capacity(f, cfg.samples_per_frame());
}

FaultPlan::Capacity FaultPlan::capacity(const FaultSpec& f, std::uint32_t samples_per_frame) {
  Capacity c;
  c.corrupt_samples_per_frame = std::max<std::uint32_t>(1, std::min<std::uint32_t>(samples_per_frame, 8));
  const std::uint64_t corrupt_frames = (f.corrupt_samples + c.corrupt_samples_per_frame - 1) / c.corrupt_samples_per_frame;
  c.slots_needed = f.drop_frames + f.duplicate_frames + f.reorder_frames + corrupt_frames + (f.stall_ms ? 1 : 0);
  c.slots_available = f.window_frames ? window_slots(f.window_frames)
                                      : std::max<std::uint64_t>(kSlotsPerFault * c.slots_needed, kMinCompactSlots);
  c.last_seq = c.slots_available ? 16 + 4 * (c.slots_available - 1) + 1 : 0;
  return c;
}

FaultPlan::RunFit FaultPlan::fit_run(const FaultSpec& f, std::uint32_t samples_per_frame, std::uint64_t frames_in_run) {
  FaultSpec compact = f;
  compact.window_frames = 0;
  const Capacity c = capacity(compact, samples_per_frame);
  RunFit r;
  r.faulted_frames = c.slots_needed;
  r.frames_in_run = frames_in_run;
  // The compact pool (max(2 x faults, 32) slots) must lie inside the run's slots.
  const std::uint64_t slots_in_run = window_slots(frames_in_run);
  r.placeable_max = slots_in_run >= kMinCompactSlots ? slots_in_run / kSlotsPerFault : 0;
  r.frames_needed = c.slots_needed ? c.last_seq + 1 : 0;
  return r;
}

FaultPlan FaultPlan::make(const FaultSpec& f, const StreamConfig& cfg) {
  FaultPlan plan;
  plan.stall_ns_ = f.stall_ms * 1'000'000;
  if (f.stall_ms && cfg.direction == Direction::rx)
    throw std::invalid_argument("faults.stall_ms: a stall of the device's consumer applies to tx and loopback only");
  const Capacity cap = capacity(f, cfg);
  if (cap.slots_needed == 0) return plan;
  // One plan, one cursor: the RX and TX threads of an rx+tx stream cannot share it.
  if (cfg.direction == Direction::rx_tx)
    throw std::invalid_argument("faults: fault injection applies to rx, tx and loopback streams, not rx+tx");
  if (!cap.fits())
    throw std::invalid_argument("faults: " + std::to_string(cap.slots_needed) + " faulty frames asked for, but a window of " +
                                std::to_string(f.window_frames) + " frames holds at most " +
                                std::to_string(cap.slots_available) +
                                " (one per 4 frames after the first 16; corrupt faults take one frame per " +
                                std::to_string(cap.corrupt_samples_per_frame) + " samples)");
  std::mt19937_64 rng(f.seed);
  std::vector<std::uint64_t> pool(cap.slots_available);
  std::iota(pool.begin(), pool.end(), 0);
  // Only the first slots_needed places are used: a partial Fisher-Yates draws them.
  for (std::uint64_t i = 0; i < cap.slots_needed; ++i) std::swap(pool[i], pool[i + rng() % (pool.size() - i)]);
  std::size_t next = 0;
  auto take = [&](Kind k) -> Entry& {
    Entry& e = plan.entries_.emplace_back();
    e.seq = 16 + 4 * pool[next++];
    e.kind = k;
    return e;
  };
  for (std::uint64_t i = 0; i < f.drop_frames; ++i) take(kDrop);
  for (std::uint64_t i = 0; i < f.duplicate_frames; ++i) take(kDuplicate);
  for (std::uint64_t i = 0; i < f.reorder_frames; ++i) take(kSwap);
  if (f.stall_ms) take(kStall);
  const std::uint32_t spf = cfg.samples_per_frame();
  std::uint64_t left = f.corrupt_samples;
  std::vector<std::uint32_t> samples(spf);
  const std::uint32_t width_mask = cfg.sample_format == SampleFormat::sc16 ? 0xFFFFFFFFu : 0xFFFFu;
  while (left > 0) {
    Entry& e = take(kCorrupt);
    const std::uint64_t k = std::min<std::uint64_t>(left, cap.corrupt_samples_per_frame);
    left -= k;
    // k distinct samples of this frame (partial Fisher-Yates), one random channel each.
    std::iota(samples.begin(), samples.end(), 0u);
    for (std::uint64_t s = 0; s < k; ++s) {
      std::uint64_t j = s + rng() % (spf - s);
      std::swap(samples[s], samples[j]);
      e.words.push_back(samples[s] * cfg.channels + std::uint32_t(rng() % cfg.channels));
    }
    e.xor_mask = std::uint32_t(rng()) & width_mask;
    if (e.xor_mask == 0) e.xor_mask = 0x5A5A5A5Au & width_mask;
  }
  std::sort(plan.entries_.begin(), plan.entries_.end(), [](const Entry& a, const Entry& b) { return a.seq < b.seq; });
  return plan;
}

void FaultPlan::corrupt(const Entry& e, std::uint8_t* payload, SampleFormat fmt) {
  const unsigned wb = bytes_per_sample(fmt);
  for (std::uint32_t w : e.words) {
    std::uint32_t v = 0;
    std::memcpy(&v, payload + std::size_t(w) * wb, wb);
    v ^= e.xor_mask;
    std::memcpy(payload + std::size_t(w) * wb, &v, wb);
  }
}

}  // namespace hilrig
