// Counters and host-side pattern check shared by the UHD and SoapySDR drivers
// (hostlib/native/src/uhd_driver.cpp, soapy_driver.cpp). The names are the sim
// path's names (docs/architecture.md: RxStream.stats(), sim stats), so one case
// means the same on every device; docs/drivers.md maps each API code to them.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/clock.hpp"
#include "hilrig/frame.hpp"
#include "hilrig/pattern.hpp"

namespace hilrig {

struct RadioRxCounters {
  using C = std::atomic<std::uint64_t>;
  C frames_received{0}, samples_received{0}, payload_bytes_received{0};
  C seq_errors{0}, missing_frames{0}, dropped_samples{0}, overruns{0}, late_commands{0}, timeouts{0};
  C pattern_errors{0}, malformed_frames{0}, other_errors{0};
  C first_frame_ns{0}, last_frame_ns{0}, longest_gap_ns{0};
  std::atomic<bool> eob_received{false};
};

struct RadioTxCounters {
  using C = std::atomic<std::uint64_t>;
  C frames_sent{0}, samples_sent{0}, payload_bytes_sent{0}, send_errors{0};
  C underruns{0}, seq_errors{0}, late_commands{0}, bursts_acked{0}, start_ns{0}, last_send_ns{0};
};

inline void bump(std::atomic<std::uint64_t>& a, std::uint64_t d = 1) {
  a.store(a.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}

// Host-side RX bookkeeping: gaps in time stamps -> dropped samples, arrival times.
// One packet = one "frame" (a driver's recv of up to one MTU).
class RadioRxAccount {
 public:
  RadioRxAccount(RadioRxCounters& c, unsigned channels, SampleFormat fmt, bool check_pattern)
      : c_(c), channels_(channels), fmt_(fmt), check_(check_pattern) {}
  void set_mtu(std::uint64_t mtu_samples) { mtu_ = mtu_samples ? mtu_samples : 1; }

  // n samples per channel received; tick = their time stamp in samples (has_tick false:
  // continue from the last packet). buffs: one buffer per channel in the wire format.
  void on_packet(std::uint64_t n, bool has_tick, std::int64_t tick, const void* const* buffs) {
    const std::uint64_t t = now_ns();
    if (!has_tick) tick = std::int64_t(next_tick_);
    if (any_ && tick > std::int64_t(next_tick_)) {
      // Samples the device produced but the host never got: the time stamp jumped.
      const std::uint64_t gap = std::uint64_t(tick) - next_tick_;
      bump(c_.dropped_samples, gap);
      bump(c_.missing_frames, (gap + mtu_ - 1) / mtu_);
      // Every jump is one sequence-error event, as on the sim path (an overflow's gap
      // included), unless the device already reported this one as out of sequence.
      if (!oos_pending_) bump(c_.seq_errors);
    }
    oos_pending_ = false;
    if (check_ && n > 0) {
      const unsigned bps = bytes_per_sample(fmt_);
      for (unsigned ch = 0; ch < channels_; ++ch) {
        if (channels_ == 1) {
          bump(c_.pattern_errors, pattern_check(std::uint64_t(tick), buffs[0], n, fmt_));
        } else {
          // One buffer per channel: word k = tick * channels + ch.
          std::uint64_t bad = 0;
          for (std::uint64_t i = 0; i < n; ++i) {
            std::uint64_t want = (std::uint64_t(tick) + i) * channels_ + ch;
            if (bps == 4) bad += static_cast<const std::uint32_t*>(buffs[ch])[i] != std::uint32_t(want);
            else bad += static_cast<const std::uint16_t*>(buffs[ch])[i] != std::uint16_t(want);
          }
          bump(c_.pattern_errors, bad);
        }
      }
    }
    if (n > 0) {
      if (!any_) c_.first_frame_ns.store(t, std::memory_order_relaxed);
      else if (t - last_ns_ > c_.longest_gap_ns.load(std::memory_order_relaxed))
        c_.longest_gap_ns.store(t - last_ns_, std::memory_order_relaxed);
      any_ = true;
      last_ns_ = t;
      next_tick_ = std::uint64_t(tick) + n;
      bump(c_.frames_received);
      bump(c_.samples_received, n);
      bump(c_.payload_bytes_received, n * channels_ * bytes_per_sample(fmt_));
      c_.last_frame_ns.store(t, std::memory_order_relaxed);
    }
  }
  // The device reported an overflow (O); out_of_sequence: a sequence error (D) that
  // UHD reports as an overflow with out_of_sequence set. The gap that follows is
  // accounted in dropped_samples/missing_frames by on_packet().
  void on_overflow(bool out_of_sequence) {
    if (out_of_sequence) {
      bump(c_.seq_errors);
      oos_pending_ = true;
    } else {
      bump(c_.overruns);
    }
  }
  bool started() const { return any_; }

 private:
  RadioRxCounters& c_;
  unsigned channels_;
  SampleFormat fmt_;
  bool check_;
  std::uint64_t mtu_ = 1, next_tick_ = 0, last_ns_ = 0;
  bool any_ = false, oos_pending_ = false;
};

inline nlohmann::json rx_counters_json(const RadioRxCounters& c) {
  auto g = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  return {{"frames_received", g(c.frames_received)}, {"samples_received", g(c.samples_received)},
          {"payload_bytes_received", g(c.payload_bytes_received)}, {"seq_errors", g(c.seq_errors)},
          {"missing_frames", g(c.missing_frames)}, {"dropped_samples", g(c.dropped_samples)},
          {"overruns", g(c.overruns)}, {"late_commands", g(c.late_commands)}, {"timeouts", g(c.timeouts)},
          {"pattern_errors", g(c.pattern_errors)}, {"malformed_frames", g(c.malformed_frames)},
          {"other_errors", g(c.other_errors)}, {"duplicate_frames", 0}, {"reordered_frames", 0},
          {"first_frame_ns", g(c.first_frame_ns)}, {"last_frame_ns", g(c.last_frame_ns)},
          {"longest_gap_ns", g(c.longest_gap_ns)}, {"latency_count", 0},
          {"eob_received", c.eob_received.load()}};
}

inline nlohmann::json tx_counters_json(const RadioTxCounters& c) {
  auto g = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  return {{"frames_sent", g(c.frames_sent)}, {"samples_sent", g(c.samples_sent)},
          {"payload_bytes_sent", g(c.payload_bytes_sent)}, {"send_errors", g(c.send_errors)},
          {"underruns", g(c.underruns)}, {"seq_errors", g(c.seq_errors)}, {"late_commands", g(c.late_commands)},
          {"bursts_acked", g(c.bursts_acked)}, {"start_ns", g(c.start_ns)}, {"last_send_ns", g(c.last_send_ns)}};
}

}  // namespace hilrig
