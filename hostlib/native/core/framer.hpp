// Builds pattern frames in place (a socket buffer or a ring slot).
#pragma once
#include <cstdint>
#include <cstring>

#include "hilrig/core/config.hpp"
#include "hilrig/core/crc32c.hpp"
#include "hilrig/core/frame.hpp"
#include "hilrig/core/pattern.hpp"

namespace hilrig {

// Writes header + counter-pattern payload for frame `seq` (tick = seq * samples_per_frame)
// into out (frame_bytes of cfg). send_time_ns is stamped by the caller via stamp_send_time
// (after any payload change, before publishing). Returns the frame length.
inline std::uint32_t build_pattern_frame(const StreamConfig& cfg, std::uint64_t seq, std::uint8_t flags,
                                         std::uint8_t* out) {
  FrameHeader h;
  h.flags = std::uint8_t(flags | kFlagTsValid | (seq == 0 ? kFlagSOB : 0));
  h.stream_id = cfg.stream_id;
  h.sample_format = std::uint8_t(cfg.sample_format);
  h.channels = std::uint8_t(cfg.channels);
  h.payload_bytes = cfg.payload_bytes();
  h.seq = seq;
  h.sample_tick = seq * cfg.samples_per_frame();
  pattern_fill(h.sample_tick * cfg.channels, out + kFrameHeaderBytes, cfg.words_per_frame(), cfg.sample_format);
  write_header(h, out);
  return std::uint32_t(kFrameHeaderBytes) + h.payload_bytes;
}

// The same frames as build_pattern_frame with the per-stream arithmetic (samples per
// frame, payload bytes, words: divisions) and the constant header fields done once:
// at 256-byte frames that arithmetic is a visible share of the per-frame cost.
class PatternFramer {
 public:
  explicit PatternFramer(const StreamConfig& cfg)
      : fmt_(cfg.sample_format), spf_(cfg.samples_per_frame()), channels_(cfg.channels),
        words_(cfg.words_per_frame()) {
    tmpl_.stream_id = cfg.stream_id;
    tmpl_.sample_format = std::uint8_t(cfg.sample_format);
    tmpl_.channels = std::uint8_t(cfg.channels);
    tmpl_.payload_bytes = cfg.payload_bytes();
  }
  std::uint32_t frame_len() const { return std::uint32_t(kFrameHeaderBytes) + tmpl_.payload_bytes; }
  std::uint32_t build(std::uint64_t seq, std::uint8_t flags, std::uint8_t* out) const {
    pattern_fill(seq * spf_ * channels_, out + kFrameHeaderBytes, words_, fmt_);
    return build_header(seq, flags, out);
  }
  // The header alone, for a payload the caller filled (pattern "signal": rf::SignalSource).
  std::uint32_t build_header(std::uint64_t seq, std::uint8_t flags, std::uint8_t* out) const {
    FrameHeader h = tmpl_;
    h.flags = std::uint8_t(flags | kFlagTsValid | (seq == 0 ? kFlagSOB : 0));
    h.seq = seq;
    h.sample_tick = seq * spf_;
    write_header(h, out);
    return frame_len();
  }
  std::uint32_t samples_per_frame() const { return spf_; }

 private:
  FrameHeader tmpl_;
  SampleFormat fmt_;
  std::uint32_t spf_, channels_, words_;
};

// The header of a frame carrying `ticks` ticks of the caller's samples (already in
// the payload at out + 48): the SoapySDR module's writeStream. Returns the frame length.
inline std::uint32_t write_samples_header(const StreamConfig& cfg, std::uint64_t seq, std::uint64_t tick,
                                          std::uint32_t ticks, std::uint8_t flags, std::uint8_t* out) {
  FrameHeader h;
  h.flags = std::uint8_t(flags | kFlagTsValid);
  h.stream_id = cfg.stream_id;
  h.sample_format = std::uint8_t(cfg.sample_format);
  h.channels = std::uint8_t(cfg.channels);
  h.payload_bytes = ticks * cfg.tick_bytes();
  h.seq = seq;
  h.sample_tick = tick;
  write_header(h, out);
  return std::uint32_t(kFrameHeaderBytes) + h.payload_bytes;
}

// Sets crc32c (when CRC_VALID wanted) and send_time_ns just before the frame leaves.
inline void finish_frame(std::uint8_t* frame, bool with_crc, std::uint64_t send_time_ns) {
  if (with_crc) {
    set_frame_crc32c(frame, crc32c(frame + kFrameHeaderBytes, frame_payload_bytes(frame)));
    set_frame_flags(frame, std::uint8_t(frame_flags(frame) | kFlagCrcValid));
  }
  set_frame_send_time_ns(frame, send_time_ns);
}

inline void set_flags(std::uint8_t* frame, std::uint8_t flags) { set_frame_flags(frame, std::uint8_t(frame_flags(frame) | flags)); }

}  // namespace hilrig
