// Per-frame receive accounting shared by the host RxStream and the simulator's TX
// side: sequence (gaps, duplicates, reordering), pattern, latency, gaps in time.
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/core/counter.hpp"
#include "hilrig/core/frame.hpp"
#include "hilrig/core/histogram.hpp"

namespace hilrig {

// Counters written by one thread, read by any (relaxed atomics; snapshot on demand).
struct RxCounters {
  using C = Counter;
  C frames_received{0}, samples_received{0}, payload_bytes_received{0};
  C seq_errors{0}, missing_frames{0}, dropped_samples{0}, duplicate_frames{0}, reordered_frames{0};
  C malformed_frames{0}, overruns{0}, pattern_errors{0}, timeouts{0};
  C first_frame_ns{0}, last_frame_ns{0}, longest_gap_ns{0};
  std::atomic<bool> eob_received{false};
  LatencyHistogram latency;
  // Frames received per block of kBlockFrames sequence numbers (block b holds seq
  // [b * kBlockFrames, (b + 1) * kBlockFrames)), each frame once (not its duplicates),
  // for the first kMaxBlocks blocks; seq_end is the highest seq seen + 1, so a block's
  // sent count is what of it lies below seq_end. The lab's "received per 100 000".
  static constexpr std::uint64_t kBlockFrames = 100'000;
  static constexpr std::size_t kMaxBlocks = 1024;
  std::array<C, kMaxBlocks> block_received{};
  C seq_end{0};
};

// Received / sent per block: (received, sent) for every block below seq_end (at most kMaxBlocks).
std::vector<std::pair<std::uint64_t, std::uint64_t>> block_counts(const RxCounters& c);

// The counters as the stats keys of docs/architecture.md (frames_received, ...,
// latency_p50_ns, eob_received): one spelling for the host RxStream and the
// simulator's tx_ counters.
nlohmann::json counters_json(const RxCounters& c);

class RxChecker {
 public:
  // seen_window (rounded up to a power of two): how far back a duplicate or a late
  // (reordered) frame is still recognised.
  // check_pattern: false for a payload that is not the counter pattern (pattern
  // "signal"): every count but pattern_errors as before.
  explicit RxChecker(RxCounters& c, std::size_t seen_window = 1u << 16, bool check_pattern = true)
      : c_(c), seen_(std::bit_ceil(std::max<std::size_t>(seen_window, 2)), kNone), seen_mask_(seen_.size() - 1),
        check_pattern_(check_pattern) {}
  ~RxChecker() { flush(); }
  RxChecker(const RxChecker&) = delete;
  RxChecker& operator=(const RxChecker&) = delete;

  // The per-frame counters (frames, samples, payload bytes, last arrival) are kept
  // in plain locals and added to the shared atomics every kFlushFrames frames, at
  // EOB and by flush(): call it after each receive batch so stats() lags by at most
  // one batch. Every other counter is written when it happens.
  void flush();

  // Accounts one received datagram/slot. now_ns = arrival time. Returns the decoded
  // header in *h (valid only when the return is true).
  bool on_frame(const std::uint8_t* frame, std::size_t len, std::uint64_t now_ns, FrameHeader* h);
  // A datagram or slot that cannot be a frame of this stream (truncated, or larger
  // than a frame/slot): counted, never parsed.
  void on_malformed() { counter_add(c_.malformed_frames); }
  // After each receive batch: publish the batch's counters, remember when data came.
  void on_batch_done(std::uint64_t now_ns) {
    flush();
    last_activity_ns_ = now_ns;
  }
  // A receive call that returned nothing: one timeout per idle_timeout_ns without a
  // frame, counted only between the first frame and end of burst.
  void on_idle(std::uint64_t now_ns, std::uint64_t idle_timeout_ns);

 private:
  static constexpr std::uint64_t kNone = ~std::uint64_t(0);

  void flush_block();
  static constexpr unsigned kFlushFrames = 64;
  RxCounters& c_;
  std::uint64_t frames_ = 0, samples_ = 0, payload_bytes_ = 0;  // not yet flushed
  std::uint64_t last_ns_ = 0, longest_gap_ns_ = 0;
  unsigned unflushed_ = 0;
  std::vector<std::uint64_t> seen_;  // seen_[seq & seen_mask_] == seq when seq was received
  std::uint64_t seen_mask_;
  // The sample geometry of the last frame (divisions are a visible share of the
  // per-frame cost at 256-byte frames, and a stream keeps its geometry).
  std::uint64_t geometry_key_ = 0, words_ = 0, ticks_ = 0;
  std::uint64_t expected_seq_ = 0;
  std::uint64_t expected_tick_ = 0;
  std::uint64_t block_ = 0, block_frames_ = 0;  // the current block and its frames not yet flushed
  bool any_ = false;
  std::uint64_t last_activity_ns_ = 0;
  bool check_pattern_;
};

}  // namespace hilrig
