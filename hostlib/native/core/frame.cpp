#include "hilrig/core/frame.hpp"

#include <cstring>
#include <stdexcept>

#include "hilrig/core/crc32c.hpp"

namespace hilrig {

SampleFormat parse_sample_format(std::string_view name) {
  if (name == "sc16") return SampleFormat::sc16;
  if (name == "sc8") return SampleFormat::sc8;
  throw std::invalid_argument("sample_format '" + std::string(name) + "' is not supported (allowed: sc16, sc8)");
}

const char* sample_format_name(SampleFormat f) { return f == SampleFormat::sc16 ? "sc16" : "sc8"; }


const char* validate_frame(const std::uint8_t* frame, std::size_t len, FrameHeader& h) {
  if (len < kFrameHeaderBytes) return "frame shorter than the 48-byte header";
  h = read_header(frame);
  if (h.magic != kFrameMagic) return "bad magic (expected 0x4852)";
  if (h.version != kFrameVersion) return "unsupported version (expected 1)";
  if (h.sample_format != 1 && h.sample_format != 2) return "unknown sample_format (allowed: 1 sc16, 2 sc8)";
  if (h.channels == 0) return "channels is 0";
  if (std::size_t(h.payload_bytes) != len - kFrameHeaderBytes) return "payload_bytes does not match the frame length";
  const unsigned tick_bytes = bytes_per_sample(SampleFormat(h.sample_format)) * h.channels;
  // tick_bytes is a power of two for 1, 2 and 4 channels: a mask, not a division.
  const bool multiple = (tick_bytes & (tick_bytes - 1)) == 0 ? (h.payload_bytes & (tick_bytes - 1)) == 0
                                                             : h.payload_bytes % tick_bytes == 0;
  if (!multiple) return "payload_bytes is not a multiple of bytes_per_sample x channels";
  if (h.flags & kFlagCrcValid) {
    if (crc32c(frame + kFrameHeaderBytes, h.payload_bytes) != h.crc32c) return "payload crc32c mismatch";
  } else if (h.crc32c != 0) {
    return "crc32c field is not 0 although CRC_VALID is clear";
  }
  return nullptr;
}

std::vector<std::uint8_t> encode_frame(FrameHeader h, const std::uint8_t* payload, std::size_t payload_len) {
  if (payload_len > 0xFFFFFFFFu) throw std::invalid_argument("payload longer than 4 GiB");
  h.payload_bytes = std::uint32_t(payload_len);
  h.crc32c = (h.flags & kFlagCrcValid) ? crc32c(payload, payload_len) : 0;
  std::vector<std::uint8_t> out(kFrameHeaderBytes + payload_len);
  write_header(h, out.data());
  if (payload_len) std::memcpy(out.data() + kFrameHeaderBytes, payload, payload_len);
  return out;
}

}  // namespace hilrig
