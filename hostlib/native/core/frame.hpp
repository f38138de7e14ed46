// Frame format of hilrig (docs/frame-format.md): 48-byte little-endian header + payload.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

static_assert(std::endian::native == std::endian::little, "hilrig frames are little-endian; this host is not");

namespace hilrig {

inline constexpr std::size_t kFrameHeaderBytes = 48;
inline constexpr std::uint16_t kFrameMagic = 0x4852;
inline constexpr std::uint8_t kFrameVersion = 1;

enum FrameFlag : std::uint8_t {
  kFlagSOB = 1u << 0,
  kFlagEOB = 1u << 1,
  kFlagTsValid = 1u << 2,
  kFlagOverflowBefore = 1u << 3,
  kFlagError = 1u << 4,
  kFlagCrcValid = 1u << 5,
};
inline constexpr std::uint8_t kKnownFlags = 0x3f;

enum class SampleFormat : std::uint8_t { sc16 = 1, sc8 = 2 };

// Bytes of one sample of one channel (one pattern word).
inline constexpr unsigned bytes_per_sample(SampleFormat f) { return f == SampleFormat::sc16 ? 4u : 2u; }
SampleFormat parse_sample_format(std::string_view name);  // throws std::invalid_argument
const char* sample_format_name(SampleFormat f);

struct FrameHeader {
  std::uint16_t magic = kFrameMagic;
  std::uint8_t version = kFrameVersion;
  std::uint8_t flags = 0;
  std::uint16_t stream_id = 0;
  std::uint8_t sample_format = 1;
  std::uint8_t channels = 1;
  std::uint32_t payload_bytes = 0;
  std::uint32_t crc32c = 0;
  std::uint64_t seq = 0;
  std::uint64_t sample_tick = 0;
  std::uint64_t send_time_ns = 0;
  std::uint64_t reserved = 0;
};
static_assert(sizeof(FrameHeader) == kFrameHeaderBytes, "FrameHeader must match the 48-byte wire layout");

// Raw header copy (the struct is the wire layout on a little-endian host). Inline:
// they run once per frame, and a call per 256-byte frame is a visible share of it.
inline void write_header(const FrameHeader& h, std::uint8_t* out) { std::memcpy(out, &h, kFrameHeaderBytes); }
inline FrameHeader read_header(const std::uint8_t* in) {
  FrameHeader h;
  std::memcpy(&h, in, kFrameHeaderBytes);
  return h;
}

// Header fields of a frame in place (frame: its first byte), each at its offset in
// FrameHeader: one load or store per field, no copy of the header, no byte offsets
// in callers.
template <class T>
inline T frame_load(const std::uint8_t* frame, std::size_t offset) {
  T v;
  std::memcpy(&v, frame + offset, sizeof v);
  return v;
}
template <class T>
inline void frame_store(std::uint8_t* frame, std::size_t offset, T v) {
  std::memcpy(frame + offset, &v, sizeof v);
}
inline std::uint8_t frame_flags(const std::uint8_t* f) { return frame_load<std::uint8_t>(f, offsetof(FrameHeader, flags)); }
inline std::uint8_t frame_sample_format(const std::uint8_t* f) {
  return frame_load<std::uint8_t>(f, offsetof(FrameHeader, sample_format));
}
inline std::uint8_t frame_channels(const std::uint8_t* f) { return frame_load<std::uint8_t>(f, offsetof(FrameHeader, channels)); }
inline std::uint32_t frame_payload_bytes(const std::uint8_t* f) {
  return frame_load<std::uint32_t>(f, offsetof(FrameHeader, payload_bytes));
}
inline std::uint64_t frame_seq(const std::uint8_t* f) { return frame_load<std::uint64_t>(f, offsetof(FrameHeader, seq)); }
inline void set_frame_flags(std::uint8_t* f, std::uint8_t v) { frame_store(f, offsetof(FrameHeader, flags), v); }
inline void set_frame_crc32c(std::uint8_t* f, std::uint32_t v) { frame_store(f, offsetof(FrameHeader, crc32c), v); }
inline void set_frame_send_time_ns(std::uint8_t* f, std::uint64_t v) { frame_store(f, offsetof(FrameHeader, send_time_ns), v); }

// Checks a received frame. Returns nullptr when valid, else a static message naming
// the broken field. With CRC_VALID set the payload CRC is verified too.
const char* validate_frame(const std::uint8_t* frame, std::size_t len, FrameHeader& out);

// Builds a whole frame: payload_bytes is set from the payload, and when CRC_VALID is
// in flags the crc32c field is computed (else it is written as 0).
std::vector<std::uint8_t> encode_frame(FrameHeader h, const std::uint8_t* payload, std::size_t payload_len);

}  // namespace hilrig
