// The RTL device core: firmware/rtl/loopback_top.v as a Verilator model, the device core
// of hilrig-sim when it runs with --firmware rtl (docs/firmware.md "RTL in the loop").
// This is the interface the simulator drives; the model itself is built by
// hostlib/native/rtl.cmake into hilrig_rtl, which only hilrig-sim links, so the core
// library (and everything else linking it) stays free of Verilator.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "hilrig/core/frame.hpp"

namespace hilrig {

// What the model was built from: the image of firmware/images.yaml and the parameters
// loopback_top was elaborated with (a stream must match them: they are not registers).
struct RtlImage {
  std::string image, version, rtl_git_hash;
  unsigned channels = 1;
  SampleFormat sample_format = SampleFormat::sc16;
  std::uint32_t samples_per_frame = 0;  // per channel
  bool crc = false;
  std::uint32_t rx_fifo_beats = 0, tx_fifo_beats = 0;
};

// The model's counters (loopback_top's outputs, widened), plus what the harness counts
// on the TX input: samples of the frames the checker accepted as good.
struct RtlCounters {
  std::uint64_t rx_frames_dropped = 0, rx_ticks_lost = 0;
  std::uint64_t tx_frames_ok = 0, tx_malformed_frames = 0, tx_seq_errors = 0, tx_missing_frames = 0;
  std::uint64_t tx_late_frames = 0, tx_pattern_errors = 0, tx_underruns = 0, tx_consumed_beats = 0;
  std::uint64_t tx_samples_ok = 0;
  bool tx_eob_seen = false, rx_stopped = false;
};

class RtlCore {
 public:
  virtual ~RtlCore() = default;
  virtual const RtlImage& image() const = 0;
  // Reset (a few clocks with rst high), then the rate dividers: one RX tick every
  // rx_rate_div clocks (the decimation), one TX sample consumed every tx_rate_div (the
  // interpolation). rx_stop: the RX burst ends with the frame completed while it is high.
  virtual void reset(std::uint16_t rx_rate_div, std::uint16_t tx_rate_div, bool rx_stop) = 0;
  virtual void set_rx_stop(bool stop) = 0;
  // TX: a frame for tx_axis (copied; a length that is not whole beats is padded with
  // zeros, the checker then counts it malformed). Beats go in whenever tx_axis_tready.
  virtual void push_tx_frame(const std::uint8_t* frame, std::uint32_t len) = 0;
  virtual std::uint64_t tx_queued_frames() const = 0;
  // Clocks the model up to `cycles` times; returns the clocks run. RX: rx_axis beats are
  // assembled into a frame; the run stops early when a frame completes (rx_frame()).
  // While a completed frame is not taken (take_rx_frame), rx_axis_tready is low: the
  // packetizer's FIFO fills and drops whole frames, as on a device whose link is full.
  virtual std::uint64_t run(std::uint64_t cycles) = 0;
  virtual const std::uint8_t* rx_frame(std::uint32_t* len) const = 0;  // nullptr: none complete
  virtual void take_rx_frame() = 0;
  virtual std::uint64_t cycles() const = 0;  // clocks since reset
  virtual RtlCounters counters() const = 0;
};

// The model built into this binary; nullptr when it was built without Verilator.
std::unique_ptr<RtlCore> make_loopback_rtl();

}  // namespace hilrig
