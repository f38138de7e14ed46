// What the host keeps of an RF stream for analysis (pattern "signal"): a bounded block of
// consecutive samples of channel 0, from the first frame after arm() (the start of the
// measured window), as complex baseband (full scale 1.0, rf::full_scale).
#pragma once
#include <atomic>
#include <complex>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "hilrig/core/frame.hpp"
#include "hilrig/rf/signal.hpp"

namespace hilrig::rf {

class SampleCapture {
 public:
  SampleCapture(std::uint32_t samples, SampleFormat fmt, unsigned channels)
      : want_(samples), fmt_(fmt), channels_(channels) {
    x_.reserve(samples);
  }
  // Any thread: capture from the next frame on.
  void arm() { armed_.store(true, std::memory_order_release); }
  // The receive thread, for each accepted frame. Invariant: x_ holds the samples of ticks
  // [start_tick_, start_tick_ + x_.size()); a frame that does not continue them (a gap:
  // frames lost or out of order) starts the capture again at its own first tick.
  void on_frame(const FrameHeader& h, const std::uint8_t* payload) {
    if (complete_.load(std::memory_order_relaxed) || !armed_.load(std::memory_order_acquire)) return;
    if (!x_.empty() && h.sample_tick != start_tick_ + x_.size()) {
      if (h.sample_tick < start_tick_ + x_.size()) return;  // a duplicate or a late frame: already held or skipped
      x_.clear();
      ++restarts_;
    }
    if (x_.empty()) start_tick_ = h.sample_tick;
    const std::uint32_t ticks = h.payload_bytes / (bytes_per_sample(fmt_) * channels_);
    const double scale = 1.0 / full_scale(fmt_);
    for (std::uint32_t k = 0; k < ticks && x_.size() < want_; ++k) {
      if (fmt_ == SampleFormat::sc16) {
        std::int16_t iq[2];
        std::memcpy(iq, payload + std::size_t(k) * channels_ * 4, sizeof iq);
        x_.emplace_back(iq[0] * scale, iq[1] * scale);
      } else {
        const auto* p = reinterpret_cast<const std::int8_t*>(payload) + std::size_t(k) * channels_ * 2;
        x_.emplace_back(p[0] * scale, p[1] * scale);
      }
    }
    if (x_.size() == want_) complete_.store(true, std::memory_order_release);
  }
  // Once complete() (or the receive thread joined): the capture.
  bool complete() const { return complete_.load(std::memory_order_acquire); }
  std::uint64_t start_tick() const { return start_tick_; }
  std::uint64_t restarts() const { return restarts_; }
  std::span<const std::complex<double>> samples() const { return x_; }
  std::uint32_t wanted() const { return want_; }

 private:
  const std::uint32_t want_;
  const SampleFormat fmt_;
  const unsigned channels_;
  std::atomic<bool> armed_{false}, complete_{false};
  std::vector<std::complex<double>> x_;
  std::uint64_t start_tick_ = 0, restarts_ = 0;
};

}  // namespace hilrig::rf
