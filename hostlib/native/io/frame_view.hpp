// A received frame, read in place (FrameSource::take, FrameReassembler::take).
#pragma once
#include <cstdint>

namespace hilrig {

struct FrameView {
  const std::uint8_t* data = nullptr;
  std::uint32_t len = 0;
  bool malformed = false;  // cannot be a frame of this stream: count it, never parse it
  explicit operator bool() const { return data != nullptr; }
};

}  // namespace hilrig
