// TX flow control of the host side (TxStream, the SoapySDR module's writeStream):
// a token bucket at the stream's rate with a lead. The host stays 50 ms ahead of the
// device's clock, so a host stall shorter than that never starves the device (an
// underrun; stalls of 5-30 ms are common on a shared VM), but never more than half
// of what the link holds (the device's socket buffer, or its ring), which would turn
// the lead itself into loss. Called per batch, never per sample.
// TxPacer::Datagrams (transport.pacing) spaces the datagrams of a UDP send one by one,
// below the timer's resolution: it sleeps (with a fine timer slack) for the bulk of a
// wait and spins on the clock for the last kSpinNs (a sleep ends ~5-15 us late).
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <utility>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/config.hpp"
#include "hilrig/core/histogram.hpp"

namespace hilrig {

class TxPacer {
 public:
  static constexpr double kLeadSeconds = 0.05;
  // The lead in frames: cfg.tx_lead_frames, else 50 ms of frames capped at half of
  // link_frames (what the link holds), within [4, 65536].
  static std::uint64_t lead_frames(const StreamConfig& cfg, std::uint64_t link_frames) {
    if (cfg.tx_lead_frames) return cfg.tx_lead_frames;
    const auto wanted = std::uint64_t(std::ceil(kLeadSeconds * cfg.rate_sps / cfg.samples_per_frame()));
    return std::clamp<std::uint64_t>(std::min(wanted, link_frames / 2), 4, 65536);
  }
  // Frames the link holds: a ring's slots, or the config's socket buffer (the kernel
  // grants twice the bytes asked for).
  static std::uint64_t link_frames(const StreamConfig& cfg, std::uint64_t ring_slots) {
    return ring_slots ? ring_slots : 2 * (cfg.transport.socket_buffer_bytes / (kFrameHeaderBytes + cfg.payload_bytes()));
  }

  // units: frames (TxStream) or samples (writeStream); lead in the same units.
  TxPacer(double units_per_s, std::uint64_t lead) : units_per_ns_(units_per_s / 1e9), lead_(lead) {}
  void start(std::uint64_t t0_ns) { t0_ = t0_ns; }
  std::uint64_t t0() const { return t0_; }
  // Units that may have been sent by now.
  std::uint64_t allowed(std::uint64_t now_ns) const {
    const double a = double(now_ns - t0_) * units_per_ns_ + double(lead_);
    return a >= 1e18 ? ~std::uint64_t(0) : std::uint64_t(a);
  }
  // When unit `sent` (0-based) may go: (t - t0) * rate >= sent - lead + 1.
  std::uint64_t due_ns(std::uint64_t sent) const {
    return sent + 1 <= lead_ ? t0_ : t0_ + std::uint64_t(double(sent + 1 - lead_) / units_per_ns_);
  }

  // How wait_until reached its deadline.
  enum class Wait { none, spun, slept };
  static constexpr std::uint64_t kSpinNs = 25'000;  // spin for the last this much: sleeps overshoot by 5-15 us
  // Returns at or after t_ns: sleeps until kSpinNs before t_ns when it is further
  // away (the calling thread's timer slack set to 1 ns), then spins on the clock with a
  // pause instruction.
  static Wait wait_until(std::uint64_t t_ns) {
    std::uint64_t now = now_ns();
    if (now >= t_ns) return Wait::none;
    Wait how = Wait::spun;
    if (t_ns - now > kSpinNs) {
      use_fine_timer_slack();
      sleep_until_ns(t_ns - kSpinNs);
      how = Wait::slept;
    }
    while (now_ns() < t_ns) pause();
    return how;
  }
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  // Per-datagram pacing of one sender: gap (idle after each send returns), period or
  // rate (send start to send start, on a fixed schedule). A sender that fell behind its
  // schedule with datagrams to send (a preemption, a slow send) catches up at most
  // kCatchUpRate times the rate (each such datagram at least period / kCatchUpRate after
  // the last) until it is back on it, so the rate asked is the rate offered and a stall
  // is made up without a burst; one more than kCatchUpNs behind starts a fresh schedule
  // instead (a stall that long is not made up). Time with nothing to send (the stream's rate clock holding
  // the frames: ready()) is not made up: those datagrams are spaced by the period. A gap
  // never catches up: it is idle time after each send, the lab's semantics.
  // Records the achieved period (send start to send start) in a histogram. One writer thread.
  class Datagrams {
   public:
    static constexpr std::uint64_t kCatchUpNs = std::uint64_t(kLeadSeconds * 1e9);  // the stalls TX's lead rides out
    // Behind its schedule, a sender goes at most this much faster than the rate: a period's
    // error stays within a quarter period, and a stall of S is made up within 4 S.
    static constexpr double kCatchUpRate = 4.0 / 3.0;
    Datagrams(const PacingSpec& p, std::uint32_t datagram_bytes)
        : gap_(p.gap_ns), period_(p.period_for(datagram_bytes)),
          catch_up_period_(std::uint64_t(double(period_) / kCatchUpRate)) {}
    bool active() const { return gap_ || period_; }
    // The sender's rate clock held the next datagrams until now_ns (it released fewer than
    // a batch): if the schedule is behind, nothing was waiting for it, so the next datagram
    // goes at once and the schedule restarts from its send, a period a datagram after it.
    void ready(std::uint64_t now_ns) {
      if (period_ && started_ && due_ < now_ns) handed_late_ = true;
    }
    // Waits until the next datagram may go; returns its send start.
    std::uint64_t before_send() {
      std::uint64_t now = 0;
      if (started_) {
        const bool fresh = std::exchange(handed_late_, false);  // ready(): the schedule restarts here
        const std::uint64_t floor = last_start_ + catch_up_period_;  // the fastest a catch-up goes
        const std::uint64_t slot = gap_ ? last_end_ + gap_ : std::max(due_, floor);
        const Wait w = fresh ? Wait::none : wait_until(slot);
        now = now_ns();  // after the wait, whatever it found: the send starts no earlier
        if (!gap_ && !fresh && (due_ < floor || w == Wait::none)) {
          late_.fetch_add(1, std::memory_order_relaxed);  // its slot had passed: catching up
        } else if (w != Wait::none) {
          (w == Wait::slept ? slept_ : spun_).fetch_add(1, std::memory_order_relaxed);
        }
        periods_.record(now - last_start_);
        if (fresh) due_ = now;
      } else {
        now = now_ns();
        due_ = now;
      }
      started_ = true;
      last_start_ = now;
      due_ += period_;
      if (period_ && due_ + kCatchUpNs < now) {  // too far behind to catch up: a fresh schedule
        due_ = now + period_;
        restarts_.fetch_add(1, std::memory_order_relaxed);
      }
      return now;
    }
    // The send of the datagram started by before_send() returned at end_ns.
    void after_send(std::uint64_t end_ns) { last_end_ = end_ns; }
    const LatencyHistogram& periods() const { return periods_; }
    std::uint64_t waits_slept() const { return slept_.load(std::memory_order_relaxed); }
    std::uint64_t waits_spun() const { return spun_.load(std::memory_order_relaxed); }
    // Datagrams sent behind their slot (period or rate: catching up, at most kCatchUpRate).
    std::uint64_t sent_late() const { return late_.load(std::memory_order_relaxed); }
    // Times the schedule started afresh, more than kCatchUpNs behind.
    std::uint64_t schedule_restarts() const { return restarts_.load(std::memory_order_relaxed); }

   private:
    std::uint64_t gap_, period_, catch_up_period_;
    bool started_ = false, handed_late_ = false;  // handed_late_: ready() found the schedule behind
    std::uint64_t due_ = 0, last_start_ = 0, last_end_ = 0;
    std::atomic<std::uint64_t> slept_{0}, spun_{0}, late_{0}, restarts_{0};  // read by stats() on another thread
    LatencyHistogram periods_;
  };

 private:
  double units_per_ns_;
  std::uint64_t lead_;
  std::uint64_t t0_ = 0;
};

}  // namespace hilrig
