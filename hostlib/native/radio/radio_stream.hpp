// Counters and host-side pattern check shared by the UHD and SoapySDR drivers
// (hostlib/native/radio/uhd_driver.cpp, soapy_driver.cpp). The names are the sim
// path's names (docs/architecture.md: RxStream.stats(), sim stats), so one case
// means the same on every device; docs/drivers.md maps each API code to them.
#pragma once
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/counter.hpp"
#include "hilrig/core/frame.hpp"
#include "hilrig/core/pattern.hpp"
#include "hilrig/core/rx_check.hpp"
#include "hilrig/io/streams.hpp"

namespace hilrig {

// The sim path's counters (the core's RxCounters, counters_json's keys) and what only
// a radio API reports beside them.
struct RadioRxCounters : RxCounters {
  Counter late_commands{0}, other_errors{0};
  // Counters a driver cannot know are "not measured" (null in the JSON), never 0:
  // the sequence family needs a time stamp on every packet, pattern_errors the check.
  std::atomic<bool> sequence_measured{true}, pattern_measured{true};
};

// TxStream's counters and the device's TX events a radio API reports.
struct RadioTxCounters : TxCounters {
  Counter underruns{0}, seq_errors{0}, late_commands{0}, bursts_acked{0};
};

// The first fatal device problem of a radio (a readStream/deactivateStream error, a
// UHD error code, the device's status no longer readable): written by any of the
// driver's threads, read by stats(); the Python driver turns it into DeviceError.
class DeviceFault {
 public:
  void set(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (what_.empty()) what_ = what;
  }
  std::string get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return what_;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    what_.clear();
  }
  // Runs one streaming loop; an exception out of the radio library (a device that
  // vanished: uhd::io_error, a module's error) becomes the fault, never std::terminate.
  template <typename F>
  void guard(const char* what, F&& loop) {
    try {
      loop();
    } catch (const std::exception& e) {
      set(std::string(what) + ": " + e.what());
    }
  }

 private:
  mutable std::mutex mu_;
  std::string what_;
};

// Host-side RX bookkeeping of a radio, with the hilrig-frame receiver's rules
// (RxChecker, docs/architecture.md "Sequence accounting") applied to the sample
// time stamp instead of a sequence number: expected = last tick + its samples.
//   tick > expected: one seq_error, missing_frames += gap in packets (MTU), dropped_samples += gap;
//   tick < expected: a packet start seen in the recent window is a duplicate (its samples
//   are not counted again), else it is reordered and takes its gap back out of
//   missing_frames/dropped_samples (nothing was lost).
// A packet without a time stamp leaves the sequence family "not measured".
class RadioRxAccount {
 public:
  RadioRxAccount(RadioRxCounters& c, unsigned channels, SampleFormat fmt, bool check_pattern,
                 std::size_t seen_window = 1u << 16)
      : c_(c), channels_(channels), fmt_(fmt), check_(check_pattern),
        seen_(std::bit_ceil(std::max<std::size_t>(seen_window, 2)), kNone), seen_mask_(seen_.size() - 1) {
    c_.pattern_measured.store(check_pattern, std::memory_order_relaxed);
  }
  void set_mtu(std::uint64_t mtu_samples) { mtu_ = mtu_samples ? mtu_samples : 1; }

  // n samples per channel received; tick = their time stamp in samples (has_tick false:
  // continue from the last packet, and the sequence counters become "not measured").
  // buffs: one buffer per channel in the wire format.
  void on_packet(std::uint64_t n, bool has_tick, std::int64_t tick_in, const void* const* buffs) {
    if (n == 0) return;
    const std::uint64_t t = now_ns();
    if (!has_tick) {
      c_.sequence_measured.store(false, std::memory_order_relaxed);
      tick_in = std::int64_t(next_tick_);
    }
    const std::uint64_t tick = std::uint64_t(std::max<std::int64_t>(tick_in, 0));
    std::uint64_t& slot = seen_[(tick / mtu_) & seen_mask_];
    bool counts_samples = true;
    if (!any_ || tick >= next_tick_) {
      if (any_ && tick > next_tick_) {
        // Samples the device produced but the host never got: the time stamp jumped.
        const std::uint64_t gap = tick - next_tick_;
        counter_add(c_.dropped_samples, gap);
        counter_add(c_.missing_frames, (gap + mtu_ - 1) / mtu_);
        // Every jump is one sequence-error event, as on the sim path (an overflow's gap
        // included), unless the device already reported this one as out of sequence.
        if (!oos_pending_) counter_add(c_.seq_errors);
      }
      next_tick_ = tick + n;
      slot = tick;
    } else if (slot == tick) {
      counter_add(c_.duplicate_frames);
      counts_samples = false;  // the samples were already counted once
    } else {
      // A late packet of a gap counted earlier: it was not missing after all.
      counter_add(c_.reordered_frames);
      if ((next_tick_ - tick) / mtu_ < seen_.size()) {
        counter_sub(c_.missing_frames, (n + mtu_ - 1) / mtu_);
        counter_sub(c_.dropped_samples, n);
      }
      slot = tick;
    }
    oos_pending_ = false;
    if (check_) check_pattern(tick, n, buffs);
    if (!any_) c_.first_frame_ns.store(t, std::memory_order_relaxed);
    else if (t - last_ns_ > c_.longest_gap_ns.load(std::memory_order_relaxed))
      c_.longest_gap_ns.store(t - last_ns_, std::memory_order_relaxed);
    any_ = true;
    last_ns_ = t;
    counter_add(c_.frames_received);
    if (counts_samples) {
      counter_add(c_.samples_received, n);
      counter_add(c_.payload_bytes_received, n * channels_ * bytes_per_sample(fmt_));
    }
    c_.last_frame_ns.store(t, std::memory_order_relaxed);
  }
  // The device reported an overflow (O); out_of_sequence: a sequence error (D) that
  // UHD reports as an overflow with out_of_sequence set. The gap that follows is
  // accounted in dropped_samples/missing_frames by on_packet().
  void on_overflow(bool out_of_sequence) {
    if (out_of_sequence) {
      counter_add(c_.seq_errors);
      oos_pending_ = true;
    } else {
      counter_add(c_.overruns);
    }
  }
  bool started() const { return any_; }

 private:
  static constexpr std::uint64_t kNone = ~std::uint64_t(0);
  void check_pattern(std::uint64_t tick, std::uint64_t n, const void* const* buffs) {
    for (unsigned ch = 0; ch < channels_; ++ch)
      counter_add(c_.pattern_errors, pattern_check_channel(tick, channels_, ch, buffs[ch], n, fmt_));
  }

  RadioRxCounters& c_;
  unsigned channels_;
  SampleFormat fmt_;
  bool check_;
  std::vector<std::uint64_t> seen_;  // seen_[(tick / mtu) & seen_mask_] == tick when a packet started there
  std::uint64_t seen_mask_;
  std::uint64_t mtu_ = 1, next_tick_ = 0, last_ns_ = 0;
  bool any_ = false, oos_pending_ = false;
};

// counters_json's keys (the sim path's; a radio frame has no send time, so
// latency_count stays 0), what the driver cannot know as null, and the radio's own.
inline nlohmann::json rx_counters_json(const RadioRxCounters& c) {
  nlohmann::json j = counters_json(c);
  if (!c.sequence_measured.load(std::memory_order_relaxed))
    for (const char* key : {"seq_errors", "missing_frames", "dropped_samples", "duplicate_frames", "reordered_frames", "blocks"})
      j[key] = nullptr;
  if (!c.pattern_measured.load(std::memory_order_relaxed)) j["pattern_errors"] = nullptr;
  j["late_commands"] = counter_get(c.late_commands);
  j["other_errors"] = counter_get(c.other_errors);
  return j;
}

inline nlohmann::json tx_counters_json(const RadioTxCounters& c) {
  return {{"frames_sent", counter_get(c.frames_sent)}, {"samples_sent", counter_get(c.samples_sent)},
          {"payload_bytes_sent", counter_get(c.payload_bytes_sent)}, {"send_errors", counter_get(c.send_errors)},
          {"underruns", counter_get(c.underruns)}, {"seq_errors", counter_get(c.seq_errors)},
          {"late_commands", counter_get(c.late_commands)}, {"bursts_acked", counter_get(c.bursts_acked)},
          {"start_ns", counter_get(c.start_ns)}, {"last_send_ns", counter_get(c.last_send_ns)}};
}

}  // namespace hilrig
