#include "hilrig/core/rx_check.hpp"

#include "hilrig/core/clock.hpp"
#include "hilrig/core/pattern.hpp"

namespace hilrig {

bool RxChecker::on_frame(const std::uint8_t* frame, std::size_t len, std::uint64_t now, FrameHeader* out) {
  FrameHeader h;
  if (validate_frame(frame, len, h) != nullptr) {
    counter_add(c_.malformed_frames);
    return false;
  }
  *out = h;
  const auto fmt = SampleFormat(h.sample_format);
  const std::uint64_t key = std::uint64_t(h.payload_bytes) << 16 | std::uint64_t(h.sample_format) << 8 | h.channels;
  if (key != geometry_key_) {
    geometry_key_ = key;
    words_ = h.payload_bytes / bytes_per_sample(fmt);
    ticks_ = words_ / h.channels;
  }
  const std::uint64_t words = words_;
  const std::uint64_t samples = ticks_;  // per-channel samples (ticks)

  ++frames_;
  if (!any_) {
    c_.first_frame_ns.store(now, std::memory_order_relaxed);
    longest_gap_ns_ = c_.longest_gap_ns.load(std::memory_order_relaxed);
    any_ = true;
  } else if (now > last_ns_ && now - last_ns_ > longest_gap_ns_) {
    longest_gap_ns_ = now - last_ns_;
    c_.longest_gap_ns.store(longest_gap_ns_, std::memory_order_relaxed);  // rare: written when it happens
  }
  last_ns_ = now;
  if (h.flags & kFlagOverflowBefore) counter_add(c_.overruns);
  if (h.send_time_ns) c_.latency.record(now > h.send_time_ns ? now - h.send_time_ns : 0);

  std::uint64_t& slot = seen_[h.seq & seen_mask_];
  bool counts_samples = true;
  if (h.seq >= expected_seq_) {
    if (h.seq > expected_seq_) {
      counter_add(c_.seq_errors);
      counter_add(c_.missing_frames, h.seq - expected_seq_);
      if (h.sample_tick > expected_tick_) counter_add(c_.dropped_samples, h.sample_tick - expected_tick_);
    }
    expected_seq_ = h.seq + 1;
    expected_tick_ = h.sample_tick + samples;
    slot = h.seq;
  } else if (slot == h.seq) {
    counter_add(c_.duplicate_frames);
    counts_samples = false;  // the samples were already counted once
  } else {
    // Late frame of a gap counted earlier: it was not missing after all.
    counter_add(c_.reordered_frames);
    if (expected_seq_ - h.seq < seen_.size()) {
      counter_sub(c_.missing_frames, 1);
      counter_sub(c_.dropped_samples, samples);
    }
    slot = h.seq;
  }
  if (counts_samples) {
    samples_ += samples;
    payload_bytes_ += h.payload_bytes;
    const std::uint64_t block = h.seq / RxCounters::kBlockFrames;
    if (block != block_) {
      flush_block();
      block_ = block;
    }
    ++block_frames_;
  }
  if (check_pattern_) {
    std::uint64_t errs = pattern_check(h.sample_tick * h.channels, frame + kFrameHeaderBytes, words, fmt);
    if (errs) counter_add(c_.pattern_errors, errs);
  }
  if (h.flags & kFlagEOB) {
    flush();  // whoever sees eob_received sees the counts of everything before it
    c_.eob_received.store(true, std::memory_order_release);
  } else if (++unflushed_ == kFlushFrames) {
    flush();
  }
  return true;
}

void RxChecker::flush() {
  unflushed_ = 0;
  if (frames_ == 0) return;
  counter_add(c_.frames_received, frames_);
  counter_add(c_.samples_received, samples_);
  counter_add(c_.payload_bytes_received, payload_bytes_);
  c_.last_frame_ns.store(last_ns_, std::memory_order_relaxed);
  frames_ = samples_ = payload_bytes_ = 0;
  flush_block();
  counter_max(c_.seq_end, expected_seq_);
}

void RxChecker::flush_block() {
  if (block_frames_ && block_ < RxCounters::kMaxBlocks) counter_add(c_.block_received[block_], block_frames_);
  block_frames_ = 0;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> block_counts(const RxCounters& c) {
  const std::uint64_t end = counter_get(c.seq_end), n = RxCounters::kBlockFrames;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (std::uint64_t b = 0; b < RxCounters::kMaxBlocks && b * n < end; ++b)
    out.emplace_back(counter_get(c.block_received[b]), std::min(n, end - b * n));
  return out;
}

void RxChecker::on_idle(std::uint64_t now, std::uint64_t idle_timeout_ns) {
  if (!last_activity_ns_) last_activity_ns_ = now;
  if (now - last_activity_ns_ < idle_timeout_ns) return;
  if (c_.frames_received.load(std::memory_order_relaxed) && !c_.eob_received.load(std::memory_order_relaxed))
    counter_add(c_.timeouts);
  last_activity_ns_ = now;
}

nlohmann::json counters_json(const RxCounters& c) {
  auto g = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  // When these counters were read, on the clock of last_frame_ns (taken before them: a
  // flush in between only makes last_frame_ns later than it).
  const std::uint64_t read_ns = now_ns();
  nlohmann::json blocks = nlohmann::json::array();  // [received, sent] per block
  for (const auto& [received, sent] : block_counts(c)) blocks.push_back({received, sent});
  return {
      {"read_ns", read_ns},
      {"frames_received", g(c.frames_received)},
      {"samples_received", g(c.samples_received)},
      {"payload_bytes_received", g(c.payload_bytes_received)},
      {"seq_errors", g(c.seq_errors)},
      {"missing_frames", g(c.missing_frames)},
      {"dropped_samples", g(c.dropped_samples)},
      {"duplicate_frames", g(c.duplicate_frames)},
      {"reordered_frames", g(c.reordered_frames)},
      {"malformed_frames", g(c.malformed_frames)},
      {"overruns", g(c.overruns)},
      {"pattern_errors", g(c.pattern_errors)},
      {"timeouts", g(c.timeouts)},
      {"first_frame_ns", g(c.first_frame_ns)},
      {"last_frame_ns", g(c.last_frame_ns)},
      {"longest_gap_ns", g(c.longest_gap_ns)},
      {"latency_p50_ns", c.latency.percentile(0.50)},
      {"latency_p99_ns", c.latency.percentile(0.99)},
      {"latency_p999_ns", c.latency.percentile(0.999)},
      {"latency_max_ns", c.latency.max()},
      {"latency_count", c.latency.count()},
      {"eob_received", c.eob_received.load(std::memory_order_relaxed)},
      {"block_frames", RxCounters::kBlockFrames},
      {"blocks", blocks},
  };
}

}  // namespace hilrig
