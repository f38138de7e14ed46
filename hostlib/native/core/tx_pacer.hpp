// TX flow control of the host side (TxStream, the SoapySDR module's writeStream):
// a token bucket at the stream's rate with a lead. The host stays 50 ms ahead of the
// device's clock, so a host stall shorter than that never starves the device (an
// underrun; stalls of 5-30 ms are common on a shared VM), but never more than half
// of what the link holds (the device's socket buffer, or its ring), which would turn
// the lead itself into loss. Called per batch, never per sample.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "hilrig/core/config.hpp"

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

 private:
  double units_per_ns_;
  std::uint64_t lead_;
  std::uint64_t t0_ = 0;
};

}  // namespace hilrig
